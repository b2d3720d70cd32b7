// The ABI handshake: every kind of unusable file is skipped with its reason, and the rest still load.
#include <gtest/gtest.h>

#include "cpu_budget.h"
#include "elf_symbols.h"
#include "test_support.h"

namespace baton::test {
namespace {

std::string skipped_reason(const PluginRegistry& reg, const std::string& file) {
  for (const SkippedPlugin& s : reg.skipped()) {
    if (std::filesystem::path(s.path).filename() == file) return s.reason;
  }
  return "";
}

TEST(PluginRegistry, GoodPluginLoadsWithItsDeclarations) {
  TempDir dir;
  dir.add_plugin("testpack");
  auto env = isolated_environment({dir.path()});
  ASSERT_TRUE(env) << env.error();
  const PluginRegistry& reg = env.value()->registry();
  ASSERT_EQ(reg.plugins().size(), 1u);
  const LoadedPlugin& p = *reg.plugins()[0];
  EXPECT_EQ(p.name, "testpack");
  EXPECT_EQ(p.kind, BATON_PLUGIN_OP_PACK);
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[0].describe(), "ADD v1-2");
  EXPECT_EQ(p.ops[1].describe(), "TimesTwo v1");
  EXPECT_EQ(p.ops[2].describe(), "STABLEHLO_COMPOSITE 'baton.test_square_plus' v1");
  ASSERT_EQ(p.options.size(), 2u);
  EXPECT_EQ(p.option_values.at("scale"), "1.0");
  EXPECT_TRUE(reg.skipped().empty());
}

TEST(PluginRegistry, EveryBadFileIsSkippedWithItsReasonAndTheRestLoad) {
  TempDir dir;
  dir.add_plugin("testplugin_no_entry");
  dir.add_plugin("testplugin_wrong_major");
  dir.add_plugin("testplugin_init_fails");
  dir.add_plugin("testplugin_min_gt_max");
  dir.add_plugin("testplugin_null_custom");
  dir.add_plugin("testplugin_duplicate_op");
  dir.add_plugin("testplugin_unresolved");
  dir.add_plugin("testpack", "a_testpack.so");
  dir.add_plugin("testpack_dup", "b_testpack_again.so");
  dir.write("not_elf.so", "this is a text file, not a shared object\n");
  dir.write("README.txt", "ignored: not named like a shared object\n");
  auto env = isolated_environment({dir.path()});
  ASSERT_TRUE(env) << env.error();
  const PluginRegistry& reg = env.value()->registry();

  ASSERT_EQ(reg.plugins().size(), 1u);
  EXPECT_EQ(reg.plugins()[0]->name, "testpack");
  EXPECT_EQ(std::filesystem::path(reg.plugins()[0]->path).filename(), "a_testpack.so");

  EXPECT_NE(skipped_reason(reg, "testplugin_no_entry.so").find("no entry symbol 'baton_plugin_entry'"),
            std::string::npos);
  EXPECT_NE(skipped_reason(reg, "testplugin_wrong_major.so").find("ABI major mismatch: plugin built for ABI 2.0"),
            std::string::npos);
  EXPECT_NE(skipped_reason(reg, "testplugin_init_fails.so").find("init failed: no such device /dev/fake-npu"),
            std::string::npos);
  EXPECT_NE(skipped_reason(reg, "testplugin_min_gt_max.so").find("invalid version range"), std::string::npos);
  EXPECT_NE(skipped_reason(reg, "testplugin_null_custom.so").find("CUSTOM without a name"), std::string::npos);
  EXPECT_NE(skipped_reason(reg, "testplugin_duplicate_op.so").find("overlaps an earlier declaration"),
            std::string::npos);
  EXPECT_NE(skipped_reason(reg, "b_testpack_again.so").find("duplicate name 'testpack'"), std::string::npos);
  EXPECT_NE(skipped_reason(reg, "not_elf.so").find("not a shared object"), std::string::npos);
  // The dynamic loader's own message: the file and the symbol it could not resolve.
  const std::string unresolved = skipped_reason(reg, "testplugin_unresolved.so");
  EXPECT_EQ(unresolved.rfind("cannot be loaded: ", 0), 0u) << unresolved;
  EXPECT_NE(unresolved.find("testplugin_unresolved.so"), std::string::npos) << unresolved;
  EXPECT_NE(unresolved.find("undefined symbol: baton_test_nobody_defines_this"), std::string::npos) << unresolved;
  EXPECT_EQ(skipped_reason(reg, "README.txt"), "");
  EXPECT_EQ(reg.skipped().size(), 9u);
}

TEST(PluginRegistry, NewerMinorWithLargerStructLoads) {
  TempDir dir;
  dir.add_plugin("testplugin_newer_minor");
  auto env = isolated_environment({dir.path()});
  ASSERT_TRUE(env) << env.error();
  ASSERT_EQ(env.value()->registry().plugins().size(), 1u);
  const LoadedPlugin& p = *env.value()->registry().plugins()[0];
  EXPECT_EQ(p.abi_minor, BATON_ABI_VERSION_MINOR + 1u);
  EXPECT_EQ(p.ops.size(), 1u);
}

TEST(PluginRegistry, OlderMinorWithSmallerStructLoadsWithTrailingFieldsAbsent) {
  TempDir dir;
  dir.add_plugin("testplugin_older_minor");
  auto env = isolated_environment({dir.path()});
  ASSERT_TRUE(env) << env.error();
  ASSERT_EQ(env.value()->registry().plugins().size(), 1u);
  const LoadedPlugin& p = *env.value()->registry().plugins()[0];
  EXPECT_EQ(p.flags, 0u);
  EXPECT_FALSE(p.has_delegate);
}

TEST(PluginRegistry, DirectoryOrderDecidesWhichDuplicateWins) {
  TempDir first, second;
  first.add_plugin("testpack_dup", "z.so");
  second.add_plugin("testpack", "a.so");
  auto env = isolated_environment({first.path(), second.path()});
  ASSERT_TRUE(env) << env.error();
  const PluginRegistry& reg = env.value()->registry();
  ASSERT_EQ(reg.plugins().size(), 1u);
  EXPECT_EQ(reg.plugins()[0]->path, first.file("z.so"));
  ASSERT_EQ(reg.skipped().size(), 1u);
  EXPECT_EQ(reg.skipped()[0].path, second.file("a.so"));
}

TEST(PluginRegistry, FoldersAndFilesOthersCanWriteAreRefusedUnlessAllowed) {
  TempDir dir, conf;
  dir.add_plugin("testpack");
  std::filesystem::permissions(dir.path(), std::filesystem::perms::others_write, std::filesystem::perm_options::add);
  auto env = isolated_environment({dir.path()});
  ASSERT_TRUE(env) << env.error();
  ASSERT_TRUE(env.value()->registry().plugins().empty());
  ASSERT_EQ(env.value()->registry().skipped().size(), 1u);
  EXPECT_NE(env.value()->registry().skipped()[0].reason.find("unsafe: " + dir.path() + " is writable by every user"),
            std::string::npos)
      << env.value()->registry().skipped()[0].reason;

  conf.write("baton.conf", "allow-unsafe-plugin-dirs = true\n");
  env = isolated_environment({dir.path()}, conf.file("baton.conf"));
  ASSERT_TRUE(env) << env.error();
  EXPECT_EQ(env.value()->registry().plugins().size(), 1u);

  std::filesystem::permissions(dir.path(), std::filesystem::perms::others_write, std::filesystem::perm_options::remove);
  std::filesystem::permissions(dir.file("testpack.so"), std::filesystem::perms::group_write,
                               std::filesystem::perm_options::add);
  env = isolated_environment({dir.path()});
  ASSERT_TRUE(env) << env.error();
  ASSERT_EQ(env.value()->registry().skipped().size(), 1u);
  EXPECT_NE(env.value()->registry().skipped()[0].reason.find("testpack.so is writable by its group"), std::string::npos);
}

TEST(PluginRegistry, RelativeFoldersInThePluginPathAreIgnored) {
  TempDir dir;
  dir.add_plugin("testpack");
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  setenv("BATON_PLUGIN_PATH", ".:plugins", 1);
  EnvironmentOptions o;
  o.use_default_dirs = false;
  o.read_config = false;
  auto log = std::make_shared<Captured>();
  o.log = [log](baton_log_level, const std::string& line) { log->lines.push_back(line); };
  auto env = Environment::create(o);
  unsetenv("BATON_PLUGIN_PATH");
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(env) << env.error();
  EXPECT_TRUE(env.value()->registry().plugins().empty()) << "loaded a plugin from the current directory";
  ASSERT_FALSE(log->lines.empty());
  EXPECT_NE(log->lines[0].find("ignoring the relative folder '.'"), std::string::npos) << log->lines[0];
}

// A name in the isolate list that no loaded plugin has is an error naming it and the loaded plugins: a
// misspelling would otherwise leave the plugin it meant in the process without a word.
TEST(PluginRegistry, IsolatingAPluginThatIsNotLoadedIsAnError) {
  TempDir dir;
  dir.add_plugin("testpack");
  EnvironmentOptions o;
  o.plugin_dirs = {dir.path()};
  o.use_environment_variables = false;
  o.use_default_dirs = false;
  o.state_dir = test_state_dir();
  o.isolate = {"testpak"};
  auto env = Environment::create(o);
  ASSERT_FALSE(env);
  EXPECT_NE(env.error().find("isolate: no plugin named 'testpak' is loaded (loaded: testpack)"), std::string::npos)
      << env.error();
  o.isolate = {"testpack"};
  auto ok = Environment::create(o);
  ASSERT_TRUE(ok) << ok.error();
}

TEST(PluginRegistry, MissingDirectoryIsNotAnError) {
  auto env = isolated_environment({"/nonexistent/baton/plugins"});
  ASSERT_TRUE(env) << env.error();
  EXPECT_TRUE(env.value()->registry().plugins().empty());
}

}  // namespace
}  // namespace baton::test

namespace baton::test {
namespace {

// A library without the entry point is recognised from its ELF dynamic symbol table and never opened:
// its constructor (which writes a marker file) does not run.
TEST(PluginRegistry, ALibraryWithoutTheEntryIsNotOpened) {
  TempDir dir, state;
  dir.add_plugin("testplugin_no_entry");
  const std::string marker = state.file("opened");
  ASSERT_EQ(setenv("BATON_TEST_OPENED_MARKER", marker.c_str(), 1), 0);
  auto env = isolated_environment({dir.path()});
  ASSERT_TRUE(env) << env.error();
  unsetenv("BATON_TEST_OPENED_MARKER");
  ASSERT_EQ(env.value()->registry().skipped().size(), 1u);
  EXPECT_NE(env.value()->registry().skipped()[0].reason.find("not opened"), std::string::npos)
      << env.value()->registry().skipped()[0].reason;
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(ElfSymbols, ReadsTheDynamicSymbolTable) {
  EXPECT_EQ(elf_exports_symbol(test_plugin("testpack"), BATON_PLUGIN_ENTRY_SYMBOL), std::optional<bool>(true));
  EXPECT_EQ(elf_exports_symbol(test_plugin("testplugin_no_entry"), BATON_PLUGIN_ENTRY_SYMBOL), std::optional<bool>(false));
  EXPECT_EQ(elf_exports_symbol(test_plugin("testplugin_no_entry"), "not_the_entry_point"), std::optional<bool>(true));
  TempDir dir;
  dir.write("junk.so", "not an ELF file at all");
  EXPECT_EQ(elf_exports_symbol(dir.file("junk.so"), BATON_PLUGIN_ENTRY_SYMBOL), std::nullopt);
  // A truncated ELF header: unreadable, never a crash.
  dir.write("short.so", std::string("\x7f" "ELF\x02\x01\x01", 7));
  EXPECT_EQ(elf_exports_symbol(dir.file("short.so"), BATON_PLUGIN_ENTRY_SYMBOL), std::nullopt);
}

}  // namespace
// A cgroup's CPU quota, as cpu.max (v2) or v1's two files joined, in whole CPUs rounded up.
TEST(CpuBudget, ReadsACgroupQuotaInWholeCpus) {
  EXPECT_EQ(cgroup_quota_cpus("max 100000"), std::nullopt);
  EXPECT_EQ(cgroup_quota_cpus("-1 100000"), std::nullopt);
  EXPECT_EQ(cgroup_quota_cpus("100000 100000"), 1);
  EXPECT_EQ(cgroup_quota_cpus("150000 100000"), 2);
  EXPECT_EQ(cgroup_quota_cpus("50000 100000"), 1);
  EXPECT_EQ(cgroup_quota_cpus("400000 100000"), 4);
  EXPECT_EQ(cgroup_quota_cpus("200000 0"), std::nullopt);
  EXPECT_EQ(cgroup_quota_cpus("lots 100000"), std::nullopt);
  EXPECT_EQ(cgroup_quota_cpus(""), std::nullopt);
}

// More threads than the process may run on are capped at its CPUs for the Environment and for every
// plugin (from --threads or a plugin's `threads` key), and the log says so once for each.
TEST(CpuBudget, ThreadsAreCappedAtTheUsableCpusWithOneWarning) {
  const int cpus = usable_cpus();
  ASSERT_GE(cpus, 1);
  TempDir dir, conf;
  dir.add_plugin("testpack");
  const std::string config = conf.path() + "/baton.conf";
  std::ofstream(config) << "[plugin.testpack]\nthreads = " << cpus + 5 << "\n";
  struct Captured {
    std::vector<std::string> lines;
  };
  auto log = std::make_shared<Captured>();
  EnvironmentOptions o;
  o.plugin_dirs = {dir.path()};
  o.use_environment_variables = false;
  o.use_default_dirs = false;
  o.state_dir = test_state_dir();
  o.config_path = config;
  o.threads = cpus + 3;
  o.log = [log](baton_log_level level, const std::string& line) {
    if (level == BATON_LOG_WARNING) log->lines.push_back(line);
  };
  auto env = Environment::create(o);
  ASSERT_TRUE(env) << env.error();
  EXPECT_EQ(env.value()->threads(), cpus);
  ASSERT_EQ(env.value()->registry().plugins().size(), 1u);
  EXPECT_EQ(env.value()->registry().plugins()[0]->threads, cpus);
  const auto count = [&](const std::string& needle) {
    return std::count_if(log->lines.begin(), log->lines.end(),
                         [&](const std::string& l) { return l.find(needle) != std::string::npos; });
  };
  EXPECT_EQ(count("threads: " + std::to_string(cpus + 3) + " asked, but this process may run on " +
                  std::to_string(cpus) + " CPU(s)"),
            1);
  EXPECT_EQ(count("plugin 'testpack': threads = " + std::to_string(cpus + 5)), 1);

  // Within the budget: as asked, without a word.
  log->lines.clear();
  o.config_path.clear();
  o.read_config = false;
  o.threads = 1;
  auto one = Environment::create(o);
  ASSERT_TRUE(one) << one.error();
  EXPECT_EQ(one.value()->threads(), 1);
  EXPECT_EQ(one.value()->registry().plugins()[0]->threads, 1);
  EXPECT_TRUE(log->lines.empty()) << log->lines[0];
}

}  // namespace baton::test
