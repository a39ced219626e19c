#include "job_output.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace mgb::batch {
namespace {

// Value of `key=` in a line of space-separated key=value pairs, or "".
std::string Field(const std::string &line, const std::string &key) {
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    if (word.size() > key.size() && word.compare(0, key.size() + 1, key + "=") == 0)
      return word.substr(key.size() + 1);
  }
  return "";
}

void AddKernelLine(const std::string &line, std::vector<KernelTime> &kernels) {
  std::string name = Field(line, "name");
  if (name.empty()) return;
  KernelTime k{name, 0, 0};
  try {
    k.ms = std::stod(Field(line, "ms"));
    k.launches = std::stol(Field(line, "launches"));
  } catch (const std::exception &) {
    return;  // a malformed line is ignored, not fatal: the job's own output is not ours
  }
  auto it = std::find_if(kernels.begin(), kernels.end(),
                         [&](const KernelTime &e) { return e.name == name; });
  if (it == kernels.end()) {
    kernels.push_back(k);
  } else {
    it->ms += k.ms;
    it->launches += k.launches;
  }
}

void AddWaitLine(const std::string &line, JobOutput &out) {
  try {
    const double begin = std::stod(Field(line, "begin"));
    const double grow = std::stod(Field(line, "grow"));
    out.wait_begin_ms += begin;
    out.wait_grow_ms += grow;
    out.waits_reported = true;
  } catch (const std::exception &) {
    // malformed: ignored, as for kernel lines
  }
}

bool ContainsOom(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text.find("out of memory") != std::string::npos ||
         text.find("cudaerrormemoryallocation") != std::string::npos ||
         text.find("cuda_error_out_of_memory") != std::string::npos;
}

}  // namespace

JobOutput ParseJobOutput(const std::string &stdout_text, const std::string &stderr_text) {
  JobOutput out;
  for (const std::string *text : {&stdout_text, &stderr_text}) {
    std::istringstream lines(*text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("MGB_KERNEL_MS ", 0) == 0) {
        AddKernelLine(line, out.kernels);
      } else if (line.rfind("MGB_WAIT_MS ", 0) == 0) {
        AddWaitLine(line, out);
      } else if (line.rfind("MGB_RESULT ", 0) == 0) {
        std::istringstream words(line.substr(11));
        words >> out.result;
      }
    }
  }
  out.mentions_oom = ContainsOom(stdout_text) || ContainsOom(stderr_text);
  return out;
}

}  // namespace mgb::batch
