// A fresh temporary directory per test, removed afterwards.
#ifndef MGB_TEST_TOOLS_TEMP_DIR_H
#define MGB_TEST_TOOLS_TEMP_DIR_H

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "mgb-batch-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string Path(const std::string &name) const { return path_ + "/" + name; }
  std::string Write(const std::string &name, const std::string &text) const {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
  static std::string Read(const std::string &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

#endif  // MGB_TEST_TOOLS_TEMP_DIR_H
