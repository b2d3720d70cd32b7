// The config file: values read, and each kind of mistake named by file, line and key.
#include <gtest/gtest.h>

#include "config.h"
#include "test_support.h"

namespace baton::test {
namespace {

TEST(Config, ReadsEveryKnownKeyAndPluginSections) {
  TempDir dir;
  dir.write("baton.conf",
            "# comment\n"
            "plugin-dirs = plugins, /opt/baton/plugins\n"
            "delegates = vulkan, xnnpack\n"
            "disabled = npu\n"
            "op-pack-precedence = mediapipe builtin\n"
            "threads = 3\n"
            "\n"
            "[plugin.testpack]\n"
            "scale = 2.5\n");
  auto config = load_config(dir.file("baton.conf"));
  ASSERT_TRUE(config) << config.error();
  EXPECT_EQ(config->plugin_dirs, (std::vector<std::string>{dir.file("plugins"), "/opt/baton/plugins"}));
  ASSERT_TRUE(config->delegates.has_value());
  EXPECT_EQ(*config->delegates, (std::vector<std::string>{"vulkan", "xnnpack"}));
  EXPECT_EQ(config->disabled, (std::vector<std::string>{"npu"}));
  EXPECT_EQ(config->op_pack_precedence, (std::vector<std::string>{"mediapipe", "builtin"}));
  EXPECT_EQ(config->threads, 3);
  ASSERT_EQ(config->plugins.count("testpack"), 1u);
  const PluginSection& s = config->plugins.at("testpack");
  EXPECT_EQ(s.line, 8);
  ASSERT_EQ(s.options.size(), 1u);
  EXPECT_EQ(s.options[0].first, "scale");
  EXPECT_EQ(s.options[0].second.value, "2.5");
  EXPECT_EQ(s.options[0].second.line, 9);
}

// `#` starts a comment anywhere on a line: after a value, after a section header, in a plugin's section.
TEST(Config, CommentsEndAnyLine) {
  TempDir dir;
  dir.write("baton.conf",
            "threads = 3   # three\n"
            "delegates = xnnpack#no space\n"
            "[plugin.testpack]  # the test pack\n"
            "scale = 2.5 # a float\n"
            "  # indented = comment\n");
  auto config = load_config(dir.file("baton.conf"));
  ASSERT_TRUE(config) << config.error();
  EXPECT_EQ(config->threads, 3);
  ASSERT_TRUE(config->delegates.has_value());
  EXPECT_EQ(*config->delegates, (std::vector<std::string>{"xnnpack"}));
  ASSERT_EQ(config->plugins.count("testpack"), 1u);
  const PluginSection& s = config->plugins.at("testpack");
  EXPECT_EQ(s.line, 3);
  ASSERT_EQ(s.options.size(), 1u);
  EXPECT_EQ(s.options[0].second.value, "2.5");
  EXPECT_EQ(s.options[0].second.line, 4);
}

TEST(Config, UnknownKeyNamesFileLineAndKey) {
  TempDir dir;
  dir.write("baton.conf", "delegates = xnnpack\n\nthreadz = 2\n");
  auto config = load_config(dir.file("baton.conf"));
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().find(dir.file("baton.conf") + ":3: unknown key 'threadz'"), std::string::npos)
      << config.error();
}

TEST(Config, BadValueNamesFileLineAndKey) {
  TempDir dir;
  dir.write("baton.conf", "threads = many\n");
  auto config = load_config(dir.file("baton.conf"));
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().find(":1: bad value 'many' for key 'threads'"), std::string::npos) << config.error();
}

TEST(Config, MalformedLineIsNamed) {
  TempDir dir;
  dir.write("baton.conf", "delegates = xnnpack\njust some words\n");
  auto config = load_config(dir.file("baton.conf"));
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().find(":2: expected 'key = value'"), std::string::npos) << config.error();
}

TEST(Config, MissingExplicitFileIsAnError) {
  auto found = find_config_file("/nonexistent/baton.conf");
  ASSERT_FALSE(found);
  EXPECT_NE(found.error().find("/nonexistent/baton.conf"), std::string::npos);
  EXPECT_NE(found.error().find("does not exist"), std::string::npos);
  auto env = isolated_environment({}, "/nonexistent/baton.conf");
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().find("/nonexistent/baton.conf"), std::string::npos);
}

TEST(Config, UnknownPluginSectionIsAnError) {
  TempDir plugins, conf;
  plugins.add_plugin("testpack");
  conf.write("baton.conf", "threads = 1\n[plugin.nosuchplugin]\nx = 1\n");
  auto env = isolated_environment({plugins.path()}, conf.file("baton.conf"));
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().find(conf.file("baton.conf") + ":2: section [plugin.nosuchplugin]: no plugin named "
                                                      "'nosuchplugin' is loaded"),
            std::string::npos)
      << env.error();
}

TEST(Config, PluginOptionIsCheckedAgainstTheDeclaration) {
  TempDir plugins, conf;
  plugins.add_plugin("testpack");
  conf.write("unknown.conf", "[plugin.testpack]\nscael = 2\n");
  auto env = isolated_environment({plugins.path()}, conf.file("unknown.conf"));
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().find(":2: key 'scael' in [plugin.testpack]: testpack has no option 'scael' (options: "
                             "scale, threads)"),
            std::string::npos)
      << env.error();

  conf.write("bad.conf", "[plugin.testpack]\n\nscale = big\n");
  env = isolated_environment({plugins.path()}, conf.file("bad.conf"));
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().find(":3: key 'scale' in [plugin.testpack]: bad value 'big': expected a number"),
            std::string::npos)
      << env.error();

  conf.write("good.conf", "[plugin.testpack]\nscale = 0.25\n");
  env = isolated_environment({plugins.path()}, conf.file("good.conf"));
  ASSERT_TRUE(env) << env.error();
  EXPECT_EQ(env.value()->registry().find("testpack")->option_values.at("scale"), "0.25");
}

// Disabled plugins are listed as disabled, not as skipped; one whose file name does not say its name is
// recognised by the name it declares (tests/default_chain_test.cc checks that the others are not opened).
TEST(Config, DisabledPluginIsListedAsDisabled) {
  TempDir plugins, conf;
  plugins.add_plugin("testpack");
  plugins.add_plugin("testpack", "vendor_kernels.so");  // declares "testpack" too: a duplicate unless disabled
  conf.write("baton.conf", "disabled = testpack\n");
  auto env = isolated_environment({plugins.path()}, conf.file("baton.conf"));
  ASSERT_TRUE(env) << env.error();
  EXPECT_TRUE(env.value()->registry().plugins().empty());
  EXPECT_TRUE(env.value()->registry().skipped().empty());
  ASSERT_EQ(env.value()->registry().disabled().size(), 2u);
  EXPECT_EQ(env.value()->registry().disabled()[0].name, "testpack");
  EXPECT_EQ(env.value()->registry().disabled()[1].name, "testpack");
  EXPECT_NE(env.value()->registry().disabled()[1].path.find("vendor_kernels.so"), std::string::npos);
}

TEST(Config, PluginDirsFromTheConfigAreSearched) {
  TempDir plugins, conf;
  plugins.add_plugin("testpack");
  conf.write("baton.conf", "plugin-dirs = " + plugins.path() + "\n");
  auto env = isolated_environment({}, conf.file("baton.conf"));
  ASSERT_TRUE(env) << env.error();
  EXPECT_NE(env.value()->registry().find("testpack"), nullptr);
}

// The example config installed with the tools parses (every key commented out).
TEST(ExampleConfig, ParsesAsShipped) {
  auto config = load_config(std::string(BATON_SOURCE_ROOT) + "/tools/config/baton.conf.example");
  ASSERT_TRUE(config) << config.error();
  EXPECT_FALSE(config->delegates.has_value());  // every key is commented out
}

}  // namespace
}  // namespace baton::test
