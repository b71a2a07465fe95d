// The one scanner of a program's local (quoted) includes: the compile cache key reads it,
// and nanocuda.load() watches the same files for changes, so the two never disagree.
#pragma once

#include <string>
#include <vector>

namespace nanocuda {

// One quoted #include, in the order the scan met it (depth first, each file once).
struct LocalInclude {
  std::string name;      // as written between the quotes
  std::string path;      // the file found, or "" when none was
  std::string contents;  // its bytes (empty when missing)
};

// Every quoted #include reachable from `source`, looked up in the including file's folder
// (`source_dir` for the source itself), then in `search`. Angle-bracket includes are the
// toolkit's or the system's and are not followed. A file that exists but cannot be read
// raises std::runtime_error naming it.
[[nodiscard]] std::vector<LocalInclude> scan_local_includes(const std::string& source,
                                                            const std::string& source_dir,
                                                            const std::vector<std::string>& search);

}  // namespace nanocuda
