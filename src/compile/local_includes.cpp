// Scans quoted #includes transitively, with std::filesystem; unreadable files are errors.
#include "nanocuda/compile/local_includes.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace nanocuda {

namespace {

namespace fs = std::filesystem;

// The quoted name of an `#include "..."` line, or "" for any other line.
std::string quoted_include(const std::string& line) {
  size_t p = line.find_first_not_of(" \t");
  if (p == std::string::npos || line[p] != '#') return {};
  p = line.find_first_not_of(" \t", p + 1);
  if (p == std::string::npos || line.compare(p, 7, "include") != 0) return {};
  size_t open = line.find('"', p + 7);
  size_t close = open == std::string::npos ? open : line.find('"', open + 1);
  if (close == std::string::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

std::string read_or_throw(const fs::path& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  if (in) buf << in.rdbuf();
  if (!in || in.bad())
    throw std::runtime_error("cannot read the included file \"" + name + "\" at " +
                             path.string() + ": " + std::strerror(errno));
  return buf.str();
}

void scan(const std::string& text, const std::string& dir, const std::vector<std::string>& search,
          std::set<std::string>& seen, std::vector<LocalInclude>& out) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string name = quoted_include(line);
    if (name.empty()) continue;
    std::vector<std::string> candidates;
    if (name[0] == '/') {
      candidates.push_back(name);
    } else {
      candidates.push_back(dir.empty() ? name : dir + "/" + name);
      for (const auto& d : search) candidates.push_back(d + "/" + name);
    }
    bool found = false;
    for (const auto& c : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(c, ec)) continue;
      found = true;
      if (!seen.insert(c).second) break;
      std::string contents = read_or_throw(c, name);
      out.push_back({name, c, contents});
      scan(contents, fs::path(c).parent_path().string(), search, seen, out);
      break;
    }
    if (!found) out.push_back({name, "", ""});
  }
}

}  // namespace

std::vector<LocalInclude> scan_local_includes(const std::string& source,
                                              const std::string& source_dir,
                                              const std::vector<std::string>& search) {
  std::set<std::string> seen;
  std::vector<LocalInclude> out;
  scan(source, source_dir, search, seen, out);
  return out;
}

}  // namespace nanocuda
