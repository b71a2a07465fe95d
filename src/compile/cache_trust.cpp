// Ownership and mode checks for folders and files code is loaded from (POSIX stat: owners are not in std::filesystem).
#include "nanocuda/compile/cache_trust.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace nanocuda {

namespace {

std::string stat_problem(const std::string& path, const struct stat& st) {
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) return path + " is not a folder or a regular file";
  if (st.st_uid != ::geteuid())
    return path + " is owned by uid " + std::to_string(st.st_uid) + ", not by this process's uid " +
           std::to_string(::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return path + " is writable by group or others (mode " + mode + ")";
  }
  return "";
}

}  // namespace

std::string cache_trust_problem(const std::string& path) {
  struct stat st{};
  // A folder is followed (a user may link ~/.cache elsewhere); a file link is refused.
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return stat_problem(path, st);
  if (::lstat(path.c_str(), &st) != 0) return path + " cannot be inspected: " + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link";
  return stat_problem(path, st);
}

std::string cache_trust_problem(int fd, const std::string& path) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return path + " cannot be inspected: " + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
  return stat_problem(path, st);
}

void create_private_directory(const std::string& dir, std::error_code& ec) {
  ec.clear();
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return;
  // mkdir's mode, not a chmod after: the folder is never briefly readable by others.
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) ec = std::error_code(errno, std::generic_category());
}

}  // namespace nanocuda
