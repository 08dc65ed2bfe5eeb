#include "partita/runtime/host_local.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace partita::runtime {
namespace {

// FNV-1a, 64 bits: an identity check, not a defence against a forged file.
uint64_t fnv1a(const void* data, size_t bytes, uint64_t hash = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

uint64_t fnv1a(const std::string& text, uint64_t hash = 1469598103934665603ull) {
  return fnv1a(text.data(), text.size(), hash);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

const NameTable<HostLocal>& host_local_names() {
  static const NameTable<HostLocal> names{{"auto", HostLocal::kAuto}, {"off", HostLocal::kOff}};
  return names;
}

HostIdentity host_identity(const std::string& parts_dir, HostLocal mode) {
  HostIdentity id;
  id.enabled = mode == HostLocal::kAuto ? 1 : 0;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) name[0] = 0;
  // Two containers may share a host name; the boot id tells their kernels apart (a container
  // on the same kernel sees the same one and, with the same files, may share them).
  id.host = fnv1a(read_text("/proc/sys/kernel/random/boot_id"), fnv1a(std::string(name)));
  char real[PATH_MAX];
  if (realpath(parts_dir.c_str(), real) == nullptr) return id;
  const std::string meta_path = std::string(real) + "/partita.json";
  struct stat st {};
  if (stat(meta_path.c_str(), &st) != 0) return id;
  const std::string meta = read_text(meta_path);
  if (meta.empty()) return id;
  uint64_t h = fnv1a(std::string(real));
  const int64_t facts[5] = {static_cast<int64_t>(st.st_dev), static_cast<int64_t>(st.st_ino),
                            static_cast<int64_t>(st.st_size),
                            static_cast<int64_t>(st.st_mtim.tv_sec),
                            static_cast<int64_t>(st.st_mtim.tv_nsec)};
  h = fnv1a(facts, sizeof(facts), h);
  h = fnv1a(meta, h);
  id.dir = h == 0 ? 1 : h;
  return id;
}

std::vector<int> host_local_peers(const std::vector<HostIdentity>& all, int me, int serving_ranks) {
  std::vector<int> peers;
  if (me < 0 || me >= static_cast<int>(all.size())) return peers;
  const HostIdentity& mine = all[static_cast<size_t>(me)];
  if (!mine.enabled || mine.dir == 0) return peers;
  for (int r = 0; r < static_cast<int>(all.size()) && r < serving_ranks; ++r) {
    if (r == me) continue;
    const HostIdentity& other = all[static_cast<size_t>(r)];
    if (other.host == mine.host && other.dir == mine.dir) peers.push_back(r);
  }
  return peers;
}

}  // namespace partita::runtime
