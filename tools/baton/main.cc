// `baton`: the command line. `baton SUBCOMMAND [options]`; `baton --help` lists the subcommands and
// `baton SUBCOMMAND --help` their options.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "commands.h"

namespace po = boost::program_options;
using namespace baton::tool;

namespace {

struct Subcommand {
  const char* name;
  const char* usage;
  const char* summary;
  void (*add_options)(po::options_description&);
  int (*run)(const GlobalOptions&, const po::variables_map&);
  const char* positional = "model";  // the option the one argument without a name is
};

void inspect_options(po::options_description& d) {
  d.add_options()("model", po::value<std::string>(), "the .tflite file")("json", "print one JSON object");
}
void plan_options(po::options_description& d) {
  d.add_options()("model", po::value<std::string>(), "the .tflite file")(
      "format", po::value<std::string>()->default_value("text"), "text, json, dot or svg (svg needs Graphviz)");
}
void bench_options(po::options_description& d) {
  d.add_options()("model", po::value<std::string>(), "the .tflite file")(
      "runs", po::value<int>()->default_value(50), "timed runs")(
      "warmup", po::value<int>()->default_value(5), "untimed runs after the first")(
      "int-range", po::value<std::string>(), "LO:HI integer inputs drawn from [LO, HI] (token ids, indices), "
      "not the type's whole range")(
      "profile", "time every step (node or delegate partition) and sum per op type")(
      "json", "print one JSON object");
}
void plugins_options(po::options_description& d) { d.add_options()("json", "print one JSON object"); }
void check_plugin_options(po::options_description& d) {
  d.add_options()("plugin", po::value<std::string>(), "the plugin's .so file")(
      "json", "print one JSON object (for CI): the plugin, a row per op and type, every case, every finding")(
      "cases", po::value<std::vector<std::string>>()->composing(),
      "a folder of one-op cases (model.tflite, in_N.npy, out_N.npy each; repeatable); default: the op cases "
      "installed with the SDK (<datadir>/baton/op-cases)")(
      "ops", po::value<std::string>(), "only the cases of these ops (comma-separated: ADD,CONV_2D or a custom op's name)")(
      "tolerance", po::value<double>()->default_value(1e-5, "1e-5"),
      "float outputs may differ from TFLite's by this times the largest reference value (other types: exactly)")(
      "in-process", "load the plugin in this process, not in a baton-plugin-host child (two threads then really "
      "overlap in a reentrant plugin; a crash ends the check)");
}
void run_options(po::options_description& d) {
  d.add_options()("model", po::value<std::string>(), "the .tflite file")(
      "input,i", po::value<std::vector<std::string>>()->composing(),
      "a .npy file per model input, in input order (repeat the option); a STRING input takes an array of "
      "bytes ('|S') or text ('<U', fed as UTF-8)")(
      "output-dir,o", po::value<std::string>(),
      "write outputs as out_0.npy, out_1.npy, ... (a STRING output as bytes, '|S'; and generated inputs as "
      "in_0.npy, ...)")(
      "image", po::value<std::string>(), "a photo (PNG, JPEG, ...) for a model with one [1,H,W,3] input: "
      "resized to HxW (bilinear), RGB; a float input gets --image-range, a uint8 input the pixel codes 0..255 "
      "(int8: minus 128)")(
      "image-range", po::value<std::string>()->default_value("-1:1"),
      "LO:HI the pixel values 0..255 map to (float inputs)")(
      "strict-shapes", "refuse an --input whose shape differs from the model's input (otherwise the input is "
      "resized to the file's shape, with a notice on stderr)")(
      "seed", po::value<uint32_t>()->default_value(0), "seed of the generated inputs when no --input is given")(
      "int-range", po::value<std::string>(), "LO:HI generated integer inputs drawn from [LO, HI] (token ids, "
      "indices), not the type's whole range")(
      "runs", po::value<int>()->default_value(1), "invoke this many times (the outputs are from the last)");
}

const Subcommand kCommands[] = {
    {"bench", "baton bench MODEL [--runs N] [--warmup N] [--threads N] [--int-range LO:HI] [--profile] [--json]",
     "load time, first run, min/median/mean/p90 latency, arena and peak memory, optional per-op profile",
     bench_options, cmd_bench},
    {"inspect", "baton inspect MODEL [--json]",
     "inputs, outputs, signatures, ops with versions and counts, tensors by type, constant bytes, metadata",
     inspect_options, cmd_inspect},
    {"plugins", "baton plugins [--json]",
     "the loaded plugins (name, version, kind, ABI, path, ops, options) and every skipped file with its reason",
     plugins_options, cmd_plugins},
    {"check-plugin", "baton check-plugin FILE.so [--json] [--cases DIR] [--ops OP,...] [--config FILE]",
     "check a plugin before shipping it: its descriptor against the ABI's rules, then every op, version and type it "
     "declares on the one-op cases against native TFLite's outputs, refusals' reasons, two threads, a resized input; "
     "a table per op and type, exit status 1 on any finding",
     check_plugin_options, cmd_check_plugin, "plugin"},
    {"plan", "baton plan MODEL [--format text|json|dot|svg]",
     "where every node runs (delegate partition, op pack, folded) and why earlier delegates refused it",
     plan_options, cmd_plan},
    {"run", "baton run MODEL [--input FILE.npy [--input FILE.npy ...] [--strict-shapes] | --image FILE] "
            "[--output-dir DIR] [--seed N]",
     "run a model on .npy inputs (or generated ones) and write or summarise its outputs", run_options, cmd_run},
};

void print_main_help() {
  std::printf(
      "baton: run TensorFlow Lite models through plugins (delegates and op packs).\n\n"
      "usage: baton SUBCOMMAND [options]\n\nsubcommands:\n");
  for (const Subcommand& c : kCommands) std::printf("  %-12s %s\n", c.name, c.summary);
  std::printf("  %-12s %s\n", "serve", "models of a repository over the Open Inference Protocol (KServe v2: REST and gRPC); "
              "runs baton-serve (`baton serve --help`)");
  GlobalOptions g;
  std::cout << "\n" << global_options_description(g) << "\n";
  std::printf(
      "Plugin folders are searched in this order: --plugin-dir, $BATON_PLUGIN_PATH (colon-separated), the\n"
      "config's plugin-dirs, %s, and the build tree's plugin folders when run from it.\n"
      "The config file is --config, else $BATON_CONFIG, else $XDG_CONFIG_HOME/baton/baton.conf, else\n"
      "/etc/baton/baton.conf.\n\n"
      "Exit status: 0 success, 1 runtime or model error, 2 usage error.\n"
      "`baton SUBCOMMAND --help` shows a subcommand's options.\n",
      BATON_PLUGIN_INSTALL_DIR);
}

// `baton serve` is the program baton-serve (server/), so this tool links no HTTP, gRPC or protobuf: it is
// found beside this executable (installed: both in bindir) or in the build tree, and runs in our place.
int exec_serve(char** argv) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::filesystem::path> candidates;
  if (!ec) {
    candidates.push_back(exe.parent_path() / "baton-serve");
    const std::string root = std::string(BATON_BUILD_ROOT) + "/";
    if (exe.string().rfind(root, 0) == 0) candidates.push_back(std::filesystem::path(BATON_BUILD_ROOT) / "server" / "baton-serve");
  }
  for (const std::filesystem::path& c : candidates) {
    if (access(c.c_str(), X_OK) != 0) continue;
    argv[1] = const_cast<char*>("baton-serve");
    execv(c.c_str(), argv + 1);
    std::fprintf(stderr, "baton serve: cannot run %s: %s\n", c.c_str(), std::strerror(errno));
    return kExitError;
  }
  std::fprintf(stderr, "baton serve: baton-serve is not installed beside %s (it is built when gRPC, protobuf and "
               "nlohmann-json are found: meson setup -Dserver=enabled; Debian: tools/setup.sh)\n",
               ec ? "baton" : exe.c_str());
  return kExitError;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_main_help();
    return kExitUsage;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_main_help();
    return kExitOk;
  }
  if (name == "--version") {
    std::printf("baton %s (plugin ABI %d.%d)\n", BATON_VERSION, BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR);
    return kExitOk;
  }
  if (name == "serve") return exec_serve(argv);
  const Subcommand* cmd = nullptr;
  for (const Subcommand& c : kCommands) {
    if (name == c.name) cmd = &c;
  }
  if (!cmd) {
    std::fprintf(stderr, "baton: unknown subcommand '%s' (try baton --help)\n", name.c_str());
    return kExitUsage;
  }

  GlobalOptions g;
  po::options_description own(std::string(cmd->name) + " options");
  cmd->add_options(own);
  own.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(own).add(global_options_description(g));
  po::positional_options_description positional;
  positional.add(cmd->positional, 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc - 1, argv + 1).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::too_many_positional_options_error& e) {
    // The model is the one positional argument: a second file name after an option's value is most often
    // another input given as `--input a.npy b.npy`.
    std::fprintf(stderr, "baton %s: more than one file name without an option (only MODEL is given so; each further "
                 "file needs its option, e.g. --input a.npy --input b.npy)\nusage: %s (try baton %s --help)\n",
                 cmd->name, cmd->usage, cmd->name);
    return kExitUsage;
  } catch (const po::error& e) {
    std::fprintf(stderr, "baton %s: %s\nusage: %s (try baton %s --help)\n", cmd->name, e.what(), cmd->usage, cmd->name);
    return kExitUsage;
  }
  if (vm.count("help")) {
    std::printf("usage: %s\n%s\n\n", cmd->usage, cmd->summary);
    std::cout << all << "\n";
    return kExitOk;
  }
  try {
    return cmd->run(g, vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton %s: error: %s\n", cmd->name, e.what());
    return kExitError;
  }
}
