// SPDX-License-Identifier: Apache-2.0
// Real devrt-server processes for the remote tests: started on a free loopback port from
// DEVRT_TEST_SERVER, killed and reaped when they go out of scope; keys made by the server itself.
#ifndef DEVRT_TEST_REMOTE_REMOTE_PROCESS_HPP
#define DEVRT_TEST_REMOTE_REMOTE_PROCESS_HPP

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <devrt/devrt.hpp>
#include <devrt/remote.hpp>

namespace devrt::test {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// A child process running argv, killed (SIGKILL) and reaped when it goes out of scope.
class Process {
public:
  explicit Process(std::vector<std::string> argv, const std::string& output = "") {
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!output.empty()) {
        std::FILE* out = std::freopen(output.c_str(), "w", stderr);
        if (out != nullptr) ::dup2(::fileno(out), 1);
      }
      std::vector<char*> args;
      for (std::string& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      std::_Exit(127);
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    if (pid_ > 0) kill_and_reap();
  }
  void signal(int sig) const { ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  void kill_and_reap() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  // Asks the process to stop (SIGTERM) and waits: its exit status, or 128 + the signal that ended it.
  int terminate() {
    ::kill(pid_, SIGTERM);
    return wait();
  }
  // Waits for the process to exit; its exit status, or 128 + the signal that ended it.
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

private:
  pid_t pid_ = -1;
};

// Waits (at most 60 s) for `path` to hold a line, and returns it.
inline std::string wait_for_line(const std::string& path) {
  for (int i = 0; i < 600; ++i) {
    std::ifstream file(path);
    std::string line;
    if (std::getline(file, line) && !line.empty()) return line;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("nothing was written to " << path << " within 60 s");
  return {};
}

// A new path in this process's scratch folder.
inline std::string scratch_path(const char* name) {
  static const std::string dir = [] {
    char pattern[] = "/tmp/devrt-remote-test-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    REQUIRE(made != nullptr);
    return std::string(made);
  }();
  static int serial = 0;
  return dir + "/" + name + std::to_string(++serial);
}

inline std::string server_program() { return std::getenv("DEVRT_TEST_SERVER"); }

// A devrt-server exporting the CPU device, on a free loopback port, with `extra` arguments.
struct Server {
  explicit Server(std::vector<std::string> extra = {})
      : address_file(scratch_path("address")), process([&] {
          std::vector<std::string> argv{server_program(), "--devices", "cpu", "--address-file", address_file};
          argv.insert(argv.end(), extra.begin(), extra.end());
          return argv;
        }()),
        address(wait_for_line(address_file)) {}
  std::string address_file;
  Process process;
  std::string address;
};

// The exit status of devrt-server run with `args` to the end; its output in *output when given.
inline int run_server(std::vector<std::string> args, std::string* output = nullptr) {
  const std::string log = scratch_path("log");
  args.insert(args.begin(), server_program());
  Process p(args, log);
  const int status = p.wait();
  if (output != nullptr) {
    std::ifstream in(log);
    output->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return status;
}

// A new key file (mode 0600), made by devrt-server --generate-key.
inline std::string new_key() {
  const std::string path = scratch_path("key");
  std::string output;
  INFO(output);
  REQUIRE(run_server({"--generate-key", path}, &output) == 0);
  return path;
}

inline Device connect_one(const std::string& address, const std::string& key_file = "") {
  devrt::remote::ConnectOptions options;
  options.key_file = key_file;
  devrt::Result<std::vector<Device>> devices = devrt::remote::connect(address, options);
  INFO(devices.status().message());
  REQUIRE(devices.ok());
  REQUIRE(devices->size() == 1);
  return devices->front();
}

inline std::uint64_t server_allocated(Device device) {
  devrt::Result<devrt::remote::ServerStats> stats = devrt::remote::server_stats(device);
  INFO(stats.status().message());
  REQUIRE(stats.ok());
  return stats->allocated_bytes;
}

} // namespace devrt::test

#endif // DEVRT_TEST_REMOTE_REMOTE_PROCESS_HPP
