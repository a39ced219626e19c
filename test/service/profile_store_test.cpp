// ProfileStore (service/server/profile_store.h) alone: no mgbd, no sockets.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "profile_store.h"
#include "test_support.h"

namespace mgb::test {
namespace {

using server::ProfileStore;

}  // namespace

TEST_CASE("profile store: the latest run's peak per user and command line", "[profile]") {
  ProfileStore store("");
  CHECK_FALSE(store.Lookup("ann", "python train.py").has_value());
  store.Record("ann", "python train.py", 3 * kGiB);
  CHECK(store.Lookup("ann", "python train.py") == 3 * kGiB);
  store.Record("ann", "python train.py", 2 * kGiB);  // the latest run, not the largest
  CHECK(store.Lookup("ann", "python train.py") == 2 * kGiB);
  CHECK_FALSE(store.Lookup("bob", "python train.py").has_value());
  CHECK_FALSE(store.Lookup("ann", "python eval.py").has_value());
  // The NUL between user and key keeps ("a", "bc") apart from ("ab", "c").
  store.Record("a", "bc", 1);
  CHECK_FALSE(store.Lookup("ab", "c").has_value());
  CHECK(store.Save().ok());  // in memory only: nothing to write
}

TEST_CASE("profile store: saved and loaded again, no temporary file left", "[profile]") {
  TempDir dir;
  const std::string path = dir.File("peaks.tsv");
  {
    ProfileStore store(path);
    CHECK(store.size() == 0);
    store.Record("ann", "python train.py --epochs 3", 3 * kGiB);
    store.Record("", "./solver", 512);  // a session whose user is unknown
    REQUIRE(store.Save().ok());
  }
  std::vector<std::string> warnings;
  ProfileStore again(path, &warnings);
  CHECK(warnings.empty());
  CHECK(again.size() == 2);
  CHECK(again.Lookup("ann", "python train.py --epochs 3") == 3 * kGiB);
  CHECK(again.Lookup("", "./solver") == 512);
  size_t files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
  // Appended in the order recorded.
  CHECK(ReadFile(path) == "ann\tpython train.py --epochs 3\t3221225472\n\t./solver\t512\n");
}

TEST_CASE("profile store: tabs, newlines and backslashes in command lines are escaped",
          "[profile]") {
  const std::string awkward = "sh -c 'printf \"a\\tb\"'\tx\ny\r\\t\\";
  CHECK(ProfileStore::Escape("a\tb\nc\rd\\e") == "a\\tb\\nc\\rd\\\\e");
  CHECK(ProfileStore::Unescape(ProfileStore::Escape(awkward)) == awkward);
  CHECK_FALSE(ProfileStore::Unescape("bad\\q").has_value());
  CHECK_FALSE(ProfileStore::Unescape("ends\\").has_value());
  TempDir dir;
  const std::string path = dir.File("peaks.tsv");
  {
    ProfileStore store(path);
    store.Record("ann", awkward, 7);
    store.Record("ann\tbob", "k", 8);
    REQUIRE(store.Save().ok());
  }
  const std::string text = ReadFile(path);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);  // one line each
  std::vector<std::string> warnings;
  ProfileStore again(path, &warnings);
  CHECK(warnings.empty());
  CHECK(again.Lookup("ann", awkward) == 7);
  CHECK(again.Lookup("ann\tbob", "k") == 8);
  CHECK_FALSE(again.Lookup("ann", "bob\tk").has_value());
}

TEST_CASE("profile store: a malformed line is skipped with one warning naming file and line",
          "[profile]") {
  TempDir dir;
  const std::string path = dir.File("peaks.tsv");
  std::ofstream(path) << "ann\tgood one\t100\n"
                         "no tabs at all\n"
                         "ann\tnot a number\tlots\n"
                         "ann\ttoo\tmany\t5\n"
                         "ann\tbad escape \\q\t5\n"
                         "ann\t\t5\n"
                         "ann\tnegative\t-5\n"
                         "\n"
                         "bob\tgood two\t200\n";
  std::vector<std::string> warnings;
  ProfileStore store(path, &warnings);
  CHECK(store.size() == 2);
  CHECK(store.Lookup("ann", "good one") == 100);
  CHECK(store.Lookup("bob", "good two") == 200);
  REQUIRE(warnings.size() == 6);
  for (int line = 2; line <= 7; ++line) {
    CHECK_THAT(
        warnings[static_cast<size_t>(line - 2)],
        Catch::StartsWith(path + ":" + std::to_string(line) + ": ") && Catch::Contains("skipped"));
  }
}

TEST_CASE("profile store: a file that cannot be written is an error naming it", "[profile]") {
  TempDir dir;
  ProfileStore store(dir.File("no/such/dir/peaks.tsv"));
  store.Record("ann", "k", 1);
  absl::Status saved = store.Save();
  CHECK(saved.code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(saved.message()), Catch::Contains("no/such/dir/peaks.tsv"));
  CHECK(store.Lookup("ann", "k") == 1);  // still known in memory
}

TEST_CASE("profile store: a program's runs by arguments, the most alike lending its peak",
          "[profile]") {
  TempDir dir;
  const std::string path = dir.File("peaks.tsv");
  {
    ProfileStore store(path);
    store.Record("ann", "python train.py", "python train.py --gib 8 --seed 1", 8 * kGiB);
    store.Record("ann", "python train.py", "python train.py --gib 2 --seed 1", 2 * kGiB);
    // Exact arguments: the peak, learned.
    auto exact = store.Lookup("ann", "python train.py", "python train.py --gib 8 --seed 1");
    REQUIRE(exact);
    CHECK(exact->peak == 8 * kGiB);
    CHECK(exact->exact);
    // Other arguments: the most alike run's, a guess.
    auto near = store.Lookup("ann", "python train.py", "python train.py --gib 8 --seed 7");
    REQUIRE(near);
    CHECK(near->peak == 8 * kGiB);
    CHECK_FALSE(near->exact);
    CHECK(store.Lookup("ann", "python train.py", "python train.py --gib 2 --seed 7")->peak ==
          2 * kGiB);
    // Equally alike: the latest.
    CHECK(store.Lookup("ann", "python train.py", "python train.py")->peak == 2 * kGiB);
    CHECK_FALSE(store.Lookup("bob", "python train.py", "python train.py --gib 8 --seed 1"));
    CHECK_FALSE(store.Lookup("ann", "python eval.py", "python train.py --gib 8 --seed 1"));
    // Without arguments the program alone is the key: no guess from others.
    CHECK_FALSE(store.Lookup("ann", "python train.py", ""));
    // A running program's peak only raises, and is partial (a guess) until its run ends.
    store.Record("ann", "python train.py", "python train.py --gib 2 --seed 1", kGiB,
                 ProfileStore::Merge::kRaise);
    CHECK(store.Lookup("ann", "python train.py", "python train.py --gib 2 --seed 1")->exact);
    store.Record("ann", "python train.py", "python train.py --gib 4 --seed 1", 3 * kGiB,
                 ProfileStore::Merge::kRaise);
    auto partial = store.Lookup("ann", "python train.py", "python train.py --gib 4 --seed 1");
    REQUIRE(partial);
    CHECK(partial->peak == 3 * kGiB);
    CHECK_FALSE(partial->exact);
    REQUIRE(store.Save().ok());
  }
  ProfileStore again(path);
  auto partial = again.Lookup("ann", "python train.py", "python train.py --gib 4 --seed 1");
  REQUIRE(partial);
  CHECK_FALSE(partial->exact);
  CHECK(again.Lookup("ann", "python train.py", "python train.py --gib 8 --seed 1")->exact);
}

TEST_CASE("profile store: a seed in the arguments does not grow the store without bound",
          "[profile]") {
  TempDir dir;
  const std::string path = dir.File("peaks.tsv");
  {
    ProfileStore store(path);
    for (int seed = 0; seed < 100; ++seed) {
      store.Record("ann", "python train.py", "python train.py --seed " + std::to_string(seed),
                   static_cast<uint64_t>(seed + 1) * (kGiB >> 10));
    }
    CHECK(store.size() == 16);  // the latest 16 argument lists
    CHECK(store.Lookup("ann", "python train.py", "python train.py --seed 99")->exact);
    CHECK_FALSE(store.Lookup("ann", "python train.py", "python train.py --seed 3")->exact);
    REQUIRE(store.Save().ok());
  }
  ProfileStore again(path);
  CHECK(again.size() == 16);  // loading applies the same limit, in the same order
  CHECK(again.Lookup("ann", "python train.py", "python train.py --seed 99")->peak ==
        100 * (kGiB >> 10));
}

}  // namespace mgb::test
