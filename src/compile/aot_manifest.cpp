// The AOT manifest: a small JSON writer and a parser for exactly the subset it writes.
#include "nanocuda/compile/aot_manifest.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "nanocuda/compile/compile_cache.h"
#include "nanocuda/compile/fatbin.h"
#include "nanocuda/compile/local_includes.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quoted(items[i]);
  return out + "]";
}

// A recursive-descent reader of the manifest's JSON: objects, arrays, strings, integers.
class Reader {
 public:
  Reader(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw ValueError(what_ + ": not a nanocuda AOT manifest (" + why + " at byte " +
                     std::to_string(at_) + ")");
  }
  void skip() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  bool peek(char c) {
    skip();
    return at_ < s_.size() && s_[at_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++at_;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (at_ < s_.size() && s_[at_] != '"') {
      char c = s_[at_++];
      if (c == '\\') {
        if (at_ >= s_.size()) break;
        char e = s_[at_++];
        if (e == 'u') {
          if (at_ + 4 > s_.size()) fail("a short \\u escape");
          out += static_cast<char>(std::stoi(s_.substr(at_, 4), nullptr, 16));
          at_ += 4;
        } else {
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        }
      } else {
        out += c;
      }
    }
    expect('"');
    return out;
  }
  long long integer() {
    skip();
    std::size_t start = at_;
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) ++at_;
    if (start == at_) fail("expected an integer");
    return std::stoll(s_.substr(start, at_ - start));
  }
  // Calls `item()` for each element of an array.
  template <class F>
  void array(F item) {
    expect('[');
    if (peek(']')) return void(++at_);
    do item(); while (peek(',') && ++at_);
    expect(']');
  }
  // Calls `member(key)` for each member of an object.
  template <class F>
  void object(F member) {
    expect('{');
    if (peek('}')) return void(++at_);
    do {
      std::string key = string();
      expect(':');
      member(key);
    } while (peek(',') && ++at_);
    expect('}');
  }
  std::vector<std::string> strings() {
    std::vector<std::string> out;
    array([&] { out.push_back(string()); });
    return out;
  }
  void end() {
    skip();
    if (at_ != s_.size()) fail("trailing text");
  }

 private:
  const std::string& s_;
  const std::string& what_;
  std::size_t at_ = 0;
};

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ValueError(std::string("PrebuiltModule::open: cannot read the ") + what + " " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

std::string AotManifest::to_json() const {
  std::string out = "{\n  \"format\": " + quoted(format) + ",\n  \"source\": " + quoted(source) +
                    ",\n  \"source_hash\": " + quoted(source_hash) + ",\n  \"options\": " +
                    string_list(options) + ",\n  \"nvrtc_version\": " + std::to_string(nvrtc_version) +
                    ",\n  \"targets\": " + string_list(targets) + ",\n  \"kernels\": [";
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    out += (i ? ",\n    " : "\n    ") + std::string("{\"name\": ") + quoted(kernels[i].name) + ", \"params\": [";
    const auto& params = kernels[i].layout.params;
    for (std::size_t p = 0; p < params.size(); ++p)
      out += (p ? ", [" : "[") + std::to_string(params[p].offset) + ", " + std::to_string(params[p].size) + "]";
    out += "]}";
  }
  return out + (kernels.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

AotManifest AotManifest::parse(const std::string& json, const std::string& what) {
  AotManifest m;
  Reader r(json, what);
  std::string fmt;
  r.object([&](const std::string& key) {
    if (key == "format") fmt = r.string();
    else if (key == "source") m.source = r.string();
    else if (key == "source_hash") m.source_hash = r.string();
    else if (key == "options") m.options = r.strings();
    else if (key == "nvrtc_version") m.nvrtc_version = static_cast<int>(r.integer());
    else if (key == "targets") m.targets = r.strings();
    else if (key == "kernels")
      r.array([&] {
        CubinKernel k;
        r.object([&](const std::string& field) {
          if (field == "name") k.name = r.string();
          else if (field == "params")
            r.array([&] {
              ParamInfo p{};
              r.expect('[');
              p.offset = static_cast<std::uint32_t>(r.integer());
              r.expect(',');
              p.size = static_cast<std::uint32_t>(r.integer());
              r.expect(']');
              k.layout.params.push_back(p);
            });
          else r.fail("unknown kernel field \"" + field + "\"");
        });
        m.kernels.push_back(std::move(k));
      });
    else r.fail("unknown field \"" + key + "\"");
  });
  r.end();
  if (fmt != format) throw ValueError(what + ": format \"" + fmt + "\", expected \"" + format + "\"");
  return m;
}

std::string aot_source_hash(const std::string& source, const std::string& source_dir,
                            const std::vector<std::string>& search) {
  std::uint64_t h = detail::hash64(source.data(), source.size());
  for (const auto& inc : scan_local_includes(source, source_dir, search)) {
    std::string part = inc.name + '\0' + inc.contents;
    h = detail::hash64(part.data(), part.size(), h);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("fnv1a64:") + hex;
}

PrebuiltModule PrebuiltModule::open(const std::string& fatbin_path) {
  std::string manifest_path = fatbin_path + ".json";
  std::string bytes = read_file(fatbin_path, "fatbin");
  (void)fatbin_entries(bytes);  // a corrupt file fails here, naming itself, not at load
  return {ObjectCode::from_bytes(CodeType::fatbin, std::move(bytes), fatbin_path),
          AotManifest::parse(read_file(manifest_path, "manifest"), manifest_path)};
}

bool PrebuiltModule::matches(const std::string& source, const std::string& source_dir,
                             const std::vector<std::string>& search,
                             const std::vector<std::string>& options) const {
  return manifest.options == options && manifest.source_hash == aot_source_hash(source, source_dir, search);
}

std::vector<std::string> PrebuiltModule::targets_for(int device_arch) const {
  std::vector<std::string> out;
  for (const auto& t : manifest.targets)
    if (fatbin_target(t).fits(device_arch)) out.push_back(t);
  return out;
}

}  // namespace nanocuda
