// mgbd's state files (service/server/state_file.h) against another local user's plants: FIFOs,
// symlinks, foreign or world-writable files, a world-writable socket directory; and the learned
// peaks' append-and-compact file (issue 32, items 2 and 12).
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include "job_grant_file.h"
#include "profile_store.h"
#include "state_file.h"
#include "test_support.h"

namespace mgb::test {
namespace {

using server::ProfileStore;

// Runs `work` and says whether it ended within two seconds; if not, `unblock` frees it (a
// blocked open of a FIFO) so that the test can end and report.
bool EndsInTime(const std::function<void()> &work, const std::function<void()> &unblock) {
  std::future<void> done = std::async(std::launch::async, work);
  if (done.wait_for(std::chrono::seconds(2)) == std::future_status::ready) return true;
  unblock();
  done.wait();
  return false;
}

// Opens (and closes) the FIFO's other end, freeing an open that waits for it.
void OpenOtherEnd(const std::string &fifo, int flags) {
  const int fd = open(fifo.c_str(), flags | O_NONBLOCK);
  if (fd >= 0) close(fd);
}

uint64_t Inode(const std::string &path) {
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  return st.st_ino;
}

size_t Lines(const std::string &path) {
  const std::string text = ReadFile(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("state files: a FIFO planted at a store's name blocks nothing and is not used",
          "[state][hostile]") {
  TempDir dir;
  const std::string path = dir.File("mgbd-profiles.tsv");
  REQUIRE(mkfifo(path.c_str(), 0666) == 0);
  std::vector<std::string> warnings;
  std::unique_ptr<ProfileStore> store;
  CHECK(EndsInTime([&] { store = std::make_unique<ProfileStore>(path, &warnings); },
                   [&] { OpenOtherEnd(path, O_WRONLY); }));
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains(path) && Catch::Contains("not a regular file"));
  store->Record("root", "./solver", 1);
  absl::Status saved;
  CHECK(EndsInTime([&] { saved = store->Save(); }, [&] { OpenOtherEnd(path, O_RDONLY); }));
  CHECK_FALSE(saved.ok());
  std::vector<std::string> grant_warnings;
  CHECK(EndsInTime([&] { (void)server::LoadJobGrants(path, &grant_warnings); },
                   [&] { OpenOtherEnd(path, O_WRONLY); }));
  CHECK(grant_warnings.size() == 1);
}

TEST_CASE("state files: FIFOs and symlinks at temporary names are never opened",
          "[state][hostile]") {
  TempDir dir;
  const std::string path = dir.File("mgbd-slurm-grants.tsv");
  const std::string victim = dir.File("victim");
  std::ofstream(victim) << "precious\n";
  // What a neighbour could plant at the names a writer of the past would have used.
  REQUIRE(mkfifo((path + ".tmp." + std::to_string(getpid())).c_str(), 0666) == 0);
  std::filesystem::create_symlink(victim, path + ".tmp." + std::to_string(getpid() + 1));
  absl::Status saved;
  CHECK(EndsInTime(
      [&] {
        saved = server::SaveJobGrants(path, {{7, 1024}});
      },
      [&] { OpenOtherEnd(path + ".tmp." + std::to_string(getpid()), O_RDONLY); }));
  CHECK(saved.ok());
  CHECK(ReadFile(path) == "7\t1024\n");
  CHECK(ReadFile(victim) == "precious\n");
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);  // users' command lines and grants are mgbd's to read
}

TEST_CASE("state files: a symlink, another user's file or a world-writable one is refused",
          "[state][hostile]") {
  TempDir dir;
  const std::string target = dir.File("elsewhere.tsv");
  std::ofstream(target) << "root\t./solver\t17000000000\n";
  const std::string path = dir.File("mgbd-profiles.tsv");
  std::string expected;
  SECTION("a symlink") {
    std::filesystem::create_symlink(target, path);
    expected = "symbolic link";
  }
  SECTION("writable by everyone") {
    std::filesystem::copy_file(target, path);
    REQUIRE(chmod(path.c_str(), 0666) == 0);
    expected = "writable by other users";
  }
  SECTION("another user's (run as root only)") {
    if (geteuid() != 0) return;  // only root can give a file away
    std::filesystem::copy_file(target, path);
    REQUIRE(chown(path.c_str(), 65534, 65534) == 0);
    expected = "owned by uid 65534";
  }
  std::vector<std::string> warnings;
  ProfileStore store(path, &warnings);
  CHECK_FALSE(store.Lookup("root", "./solver").has_value());  // the stranger's number is unused
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains(path) && Catch::Contains(expected));
}

TEST_CASE("state files: not beside a socket in a directory others may write", "[state][hostile]") {
  TempDir dir;
  const std::string shared = dir.File("tmp");
  REQUIRE(mkdir(shared.c_str(), 0777) == 0);
  REQUIRE(chmod(shared.c_str(), 01777) == 0);  // like /tmp
  std::string why;
  const std::string own = dir.File("home/.local/state/mgbd");
  CHECK(server::DefaultStateDirectory(shared + "/mgbd.sock", own, &why) == own + "/");
  CHECK_THAT(why, Catch::Contains("writable by other users") && Catch::Contains(own));
  struct stat st {};
  REQUIRE(stat(own.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  // A private socket directory keeps its state beside the socket, as before.
  why.clear();
  CHECK(server::DefaultStateDirectory(dir.File("mgbd.sock"), own, &why) == dir.path() + "/");
  CHECK(why.empty());
  // A planted "private" directory that others may write is refused: state stays in memory.
  const std::string planted = shared + "/state";
  REQUIRE(mkdir(planted.c_str(), 0777) == 0);
  REQUIRE(chmod(planted.c_str(), 0777) == 0);
  CHECK(server::DefaultStateDirectory(shared + "/mgbd.sock", planted, &why).empty());
  CHECK_THAT(why, Catch::Contains(planted));
}

TEST_CASE("learned peaks: a recorded peak appends a line; superseded lines are compacted",
          "[state][profile]") {
  TempDir dir;
  const std::string path = dir.File("peaks.tsv");
  ProfileStore store(path);
  store.Record("ann", "./a", 1);
  REQUIRE(store.Save().ok());
  const uint64_t inode = Inode(path);
  for (int run = 0; run < 100; ++run) {
    store.Record("ann", "./a", static_cast<uint64_t>(run));
    REQUIRE(store.Save().ok());
  }
  CHECK(Inode(path) == inode);  // appended to, not rewritten
  CHECK(Lines(path) == 101);
  CHECK(ProfileStore(path).Lookup("ann", "./a") == 99);  // the latest line wins
  for (int run = 0; run < 2000; ++run) {
    store.Record("ann", "./a", static_cast<uint64_t>(run));
    REQUIRE(store.Save().ok());
  }
  CHECK(Lines(path) < 1100);  // compacted on the way: one entry, few superseded lines
  CHECK(ProfileStore(path).Lookup("ann", "./a") == 1999);
}

}  // namespace mgb::test
