// The crash journal: before the host calls a plugin in prepare or in the first invoke of a model, it
// records which plugin is running (a small file per interpreter under $XDG_STATE_HOME/baton/journal,
// named by the model's fingerprint, the process id and the interpreter's number in the process). If the
// process dies there, the record is still on disk while no process of that id lives; the next start
// then quarantines the plugin for that model (skipped, with a message saying why and which file to
// remove to try it again). The config's `crash-journal = false` turns all of it off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace baton {

class CrashJournal {
 public:
  // An empty `dir` disables the journal.
  CrashJournal(std::string dir, uint64_t fingerprint, std::string model);
  ~CrashJournal() { leave(); }
  CrashJournal(const CrashJournal&) = delete;
  CrashJournal& operator=(const CrashJournal&) = delete;
  bool enabled() const { return !dir_.empty(); }

  // Turns a record left by a process that died into a quarantine, then returns every plugin quarantined
  // for this model, with the message to show.
  std::map<std::string, std::string> quarantined();

  // Records that `plugin` is about to run `stage`; rewrites the record only when either changes.
  void enter(const std::string& plugin, const char* stage);
  // The calls finished: the record goes.
  void leave();
  // An isolated plugin's child process died (or was killed) during `stage`; the process lives on. The
  // second death of the plugin on this model quarantines it like a death of the process would.
  void child_died(const std::string& plugin, const std::string& stage);
  static constexpr int kChildDeathsToQuarantine = 2;

 private:
  std::string record_path() const;
  std::string quarantine_path(const std::string& plugin) const;

  std::string dir_;
  std::string key_;       // the model's fingerprint, hex
  std::string instance_;  // "<pid>.<n>": this interpreter's records
  std::string model_;
  std::string current_;  // "plugin\nstage" last written, "" when no record is on disk
  int fd_ = -1;           // the record, open from the first enter to leave
  size_t written_ = 0;    // the longest record written through fd_ (shorter ones are padded to it)
};

}  // namespace baton
