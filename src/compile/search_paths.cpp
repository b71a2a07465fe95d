// The public search-folder calls, over the toolkit loader's (library_search.cpp).
#include "nanocuda/compile/search_paths.h"

#include "nanocuda/compile/library_search.h"

namespace nanocuda {

void add_library_search_dirs(const std::vector<std::string>& dirs) { detail::add_library_search_dirs(dirs); }

std::vector<std::string> library_search_dirs() { return detail::library_search_dirs(); }

void add_include_search_dirs(const std::vector<std::string>& dirs) { detail::add_include_search_dirs(dirs); }

}  // namespace nanocuda
