#include "crash_journal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "posix_files.h"

namespace baton {

CrashJournal::CrashJournal(std::string dir, uint64_t fingerprint, std::string model)
    : dir_(std::move(dir)), model_(std::move(model)) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fingerprint));
  key_ = hex;
  static std::atomic<unsigned> next{0};
  instance_ = std::to_string(::getpid()) + "." + std::to_string(next++);
}

std::string CrashJournal::record_path() const { return dir_ + "/" + key_ + "." + instance_ + ".inprogress"; }

std::string CrashJournal::quarantine_path(const std::string& plugin) const {
  return dir_ + "/" + key_ + "." + plugin + ".quarantine";
}

std::map<std::string, std::string> CrashJournal::quarantined() {
  std::map<std::string, std::string> out;
  if (!enabled()) return out;
  // Records of this model left by processes that no longer exist: each names the plugin that was running.
  const std::string record_prefix = key_ + ".", record_suffix = ".inprogress";
  for (const std::string& name : directory_names(dir_)) {
    if (name.rfind(record_prefix, 0) != 0 || !name.ends_with(record_suffix)) continue;
    const std::string path = dir_ + "/" + name;
    const long pid = std::strtol(name.c_str() + record_prefix.size(), nullptr, 10);
    if (pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) continue;  // still running
    std::ifstream record(path);
    std::string plugin, stage;
    std::getline(record, plugin);
    std::getline(record, stage);
    record.close();
    if (!plugin.empty()) {
      const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
      char when[32];
      std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
      std::ofstream(quarantine_path(plugin)) << stage << "\n" << model_ << "\nfound " << when << "\n";
    }
    remove_file(path);
  }
  const std::string prefix = key_ + ".", suffix = ".quarantine";
  for (const std::string& name : directory_names(dir_)) {
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 || !name.ends_with(suffix)) continue;
    const std::string plugin = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    std::string stage;
    const std::string path = dir_ + "/" + name;
    std::ifstream file(path);
    std::getline(file, stage);
    out[plugin] = "plugin " + plugin + " is quarantined for " + model_ + ": a process died during its " +
                  (stage.empty() ? std::string("run") : stage) + " of this model; remove " + path +
                  " to try it again (or set crash-journal = false in the config)";
  }
  return out;
}

// The record is written in place through a descriptor kept open from the first enter to leave: no
// truncation and no new file per change, so ext4 does not flush the file on close (it does after a
// truncating rewrite) and a model split into many partitions does not pay a disk write per switch. A
// shorter record is padded with newlines over the longer one before it; the page cache keeps it for the
// next process if this one dies.
void CrashJournal::enter(const std::string& plugin, const char* stage) {
  if (!enabled()) return;
  const std::string now = plugin + "\n" + stage;
  if (now == current_) return;
  if (fd_ < 0) {
    make_directories(dir_);
    fd_ = ::open(record_path().c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    written_ = 0;
    if (fd_ < 0) return;  // no journal this time: the run itself goes on
  }
  std::string record = now + "\n" + model_ + "\n";
  const size_t length = record.size();
  if (record.size() < written_) record.append(written_ - record.size(), '\n');
  if (::pwrite(fd_, record.data(), record.size(), 0) == static_cast<ssize_t>(record.size())) {
    written_ = std::max(written_, length);
    current_ = now;
  }
}

void CrashJournal::child_died(const std::string& plugin, const std::string& stage) {
  if (!enabled()) return;
  make_directories(dir_);
  const std::string count_path = dir_ + "/" + key_ + "." + plugin + ".deaths";
  int count = 0;
  std::ifstream(count_path) >> count;
  ++count;
  std::ofstream(count_path, std::ios::trunc) << count << "\n";
  if (count < kChildDeathsToQuarantine) return;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  std::ofstream(quarantine_path(plugin)) << stage << " (its isolated process died " << count << " times)\n"
                                         << model_ << "\nfound " << when << "\n";
  remove_file(count_path);
}

void CrashJournal::leave() {
  if (fd_ < 0) return;
  remove_file(record_path());
  ::close(fd_);
  fd_ = -1;
  current_.clear();
}

}  // namespace baton
