// A file under the test's temporary directory, removed at the end of the test.
#ifndef MGB_TEST_SIM_TEMP_FILE_H
#define MGB_TEST_SIM_TEMP_FILE_H

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace mgb::sim::test {

class TempFile {
 public:
  explicit TempFile(const std::string &name, const std::string &text = "")
      : path_((std::filesystem::temp_directory_path() /
               ("mgb-sim-test-" + std::to_string(::getpid()) + "-" + name))
                  .string()) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string &path() const { return path_; }
  std::string Read() const {
    std::ifstream in(path_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  std::string path_;
};

}  // namespace mgb::sim::test

#endif  // MGB_TEST_SIM_TEMP_FILE_H
