// SPDX-License-Identifier: Apache-2.0
// The host CPU as an LLVM target: triple, CPU name, features, cores and SIMD width.
#include "cpu_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

namespace devrt::cpu {

std::int64_t simd_32bit_lanes(std::span<const std::string> mattr, std::int64_t sve_vector_bytes) noexcept {
  auto has = [&](std::string_view feature) { return std::find(mattr.begin(), mattr.end(), feature) != mattr.end(); };
  if (has("+avx512f") && has("+avx512bw")) return 16;
  if (has("+avx2")) return 8;
  if (has("+sve") && sve_vector_bytes >= 16) return sve_vector_bytes / 4;
  return 4;
}

namespace {

struct NamedModel {
  unsigned model;
  int level; // the x86-64 micro-architecture level the name implies
  std::string_view name;
};

// Intel family 6 models LLVM has a -mcpu for (client and server parts).
constexpr NamedModel kIntelFamily6[] = {
    {0x2a, 2, "sandybridge"},    {0x2d, 2, "sandybridge"},    {0x3a, 2, "ivybridge"},      {0x3e, 2, "ivybridge"},
    {0x3c, 3, "haswell"},        {0x3f, 3, "haswell"},        {0x45, 3, "haswell"},        {0x46, 3, "haswell"},
    {0x3d, 3, "broadwell"},      {0x47, 3, "broadwell"},      {0x4f, 3, "broadwell"},      {0x56, 3, "broadwell"},
    {0x4e, 3, "skylake"},        {0x5e, 3, "skylake"},        {0x8e, 3, "skylake"},        {0x9e, 3, "skylake"},
    {0xa5, 3, "skylake"},        {0xa6, 3, "skylake"},        {0x66, 4, "cannonlake"},     {0x7d, 4, "icelake-client"},
    {0x7e, 4, "icelake-client"}, {0x6a, 4, "icelake-server"}, {0x6c, 4, "icelake-server"}, {0x8c, 4, "tigerlake"},
    {0x8d, 4, "tigerlake"},      {0x97, 3, "alderlake"},      {0x9a, 3, "alderlake"},      {0xb7, 3, "raptorlake"},
    {0xba, 3, "raptorlake"},     {0xbf, 3, "raptorlake"},     {0xaa, 3, "meteorlake"},     {0x8f, 4, "sapphirerapids"},
    {0xcf, 4, "emeraldrapids"},  {0xad, 4, "graniterapids"},  {0xae, 4, "graniterapids"},
};

} // namespace

std::string_view x86_cpu_name(std::string_view vendor, unsigned family, unsigned model, unsigned stepping,
                              int level) noexcept {
  NamedModel found{0, 0, ""};
  if (vendor == "GenuineIntel" && family == 6) {
    if (model == 0x55) { // one model number for three server generations
      found = {model, 4, stepping >= 11 ? "cooperlake" : stepping >= 5 ? "cascadelake" : "skylake-avx512"};
    }
    for (const NamedModel& entry : kIntelFamily6) {
      if (entry.model == model) found = entry;
    }
  } else if (vendor == "AuthenticAMD" || vendor == "HygonGenuine") {
    if (family == 0x17) found = {model, 3, model >= 0x30 ? "znver2" : "znver1"};
    if (family == 0x19) {
      bool zen4 = (model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0xaf);
      found = {model, zen4 ? 4 : 3, zen4 ? "znver4" : "znver3"};
    }
    if (family == 0x1a) found = {model, 4, "znver5"};
  }
  return found.level <= level ? found.name : std::string_view();
}

#if defined(__x86_64__) || defined(__i386__)
namespace {

struct CpuidBits {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidBits cpuid(unsigned leaf, unsigned subleaf = 0) noexcept {
  CpuidBits r;
  if (__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx) == 0) return CpuidBits{};
  return r;
}

bool bit(unsigned value, unsigned index) noexcept { return ((value >> index) & 1u) != 0; }

struct X86Description {
  std::string vendor;
  std::string brand;
  unsigned family = 0, model = 0, stepping = 0;
  std::vector<std::string> mattr;
  int level = 1;
};

// The -mattr features cpuid lists and the OS has enabled the register state for.
std::vector<std::string> x86_features(const CpuidBits& leaf1, unsigned max_leaf) {
  // Register state the OS saves: without it the instructions fault even when cpuid lists them.
  unsigned long long xcr0 = 0;
  if (bit(leaf1.ecx, 27)) { // OSXSAVE
    unsigned lo = 0;
    unsigned hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  const bool avx_state = (xcr0 & 0x6) == 0x6;
  const bool avx512_state = avx_state && (xcr0 & 0xe0) == 0xe0;
  const bool amx_state = (xcr0 & 0x60000) == 0x60000;

  CpuidBits leaf7 = max_leaf >= 7 ? cpuid(7, 0) : CpuidBits{};
  CpuidBits leaf7_1 = max_leaf >= 7 && leaf7.eax >= 1 ? cpuid(7, 1) : CpuidBits{};
  CpuidBits ext1 = cpuid(0x80000000).eax >= 0x80000001 ? cpuid(0x80000001) : CpuidBits{};

  struct Feature {
    const char* name;
    bool present;
  };
  const Feature features[] = {
      {"+sse2", bit(leaf1.edx, 26)},
      {"+sse3", bit(leaf1.ecx, 0)},
      {"+ssse3", bit(leaf1.ecx, 9)},
      {"+sse4.1", bit(leaf1.ecx, 19)},
      {"+sse4.2", bit(leaf1.ecx, 20)},
      {"+popcnt", bit(leaf1.ecx, 23)},
      {"+aes", bit(leaf1.ecx, 25)},
      {"+movbe", bit(leaf1.ecx, 22)},
      {"+avx", avx_state && bit(leaf1.ecx, 28)},
      {"+f16c", avx_state && bit(leaf1.ecx, 29)},
      {"+fma", avx_state && bit(leaf1.ecx, 12)},
      {"+bmi", bit(leaf7.ebx, 3)},
      {"+bmi2", bit(leaf7.ebx, 8)},
      {"+lzcnt", bit(ext1.ecx, 5)},
      {"+avx2", avx_state && bit(leaf7.ebx, 5)},
      {"+avxvnni", avx_state && bit(leaf7_1.eax, 4)},
      {"+avx512f", avx512_state && bit(leaf7.ebx, 16)},
      {"+avx512dq", avx512_state && bit(leaf7.ebx, 17)},
      {"+avx512ifma", avx512_state && bit(leaf7.ebx, 21)},
      {"+avx512cd", avx512_state && bit(leaf7.ebx, 28)},
      {"+avx512bw", avx512_state && bit(leaf7.ebx, 30)},
      {"+avx512vl", avx512_state && bit(leaf7.ebx, 31)},
      {"+avx512vbmi", avx512_state && bit(leaf7.ecx, 1)},
      {"+avx512vbmi2", avx512_state && bit(leaf7.ecx, 6)},
      {"+avx512vnni", avx512_state && bit(leaf7.ecx, 11)},
      {"+avx512bitalg", avx512_state && bit(leaf7.ecx, 12)},
      {"+avx512vpopcntdq", avx512_state && bit(leaf7.ecx, 14)},
      {"+avx512bf16", avx512_state && bit(leaf7_1.eax, 5)},
      {"+avx512fp16", avx512_state && bit(leaf7.edx, 23)},
      {"+amx-bf16", amx_state && bit(leaf7.edx, 22)},
      {"+amx-tile", amx_state && bit(leaf7.edx, 24)},
      {"+amx-int8", amx_state && bit(leaf7.edx, 25)},
  };
  std::vector<std::string> mattr;
  for (const Feature& feature : features) {
    if (feature.present) mattr.emplace_back(feature.name);
  }
  return mattr;
}

// The x86-64 micro-architecture level (psABI) the features reach: 1 to 4.
int x86_level(const std::vector<std::string>& mattr) {
  int level = 1;
  auto has = [&](std::string_view f) { return std::find(mattr.begin(), mattr.end(), f) != mattr.end(); };
  if (has("+sse4.2") && has("+popcnt") && has("+ssse3")) level = 2;
  if (level == 2 && has("+avx2") && has("+fma") && has("+bmi") && has("+bmi2") && has("+f16c") && has("+lzcnt") &&
      has("+movbe"))
    level = 3;
  if (level == 3 && has("+avx512f") && has("+avx512bw") && has("+avx512cd") && has("+avx512dq") && has("+avx512vl"))
    level = 4;

  return level;
}

// The processor brand string, trimmed; empty when cpuid has none.
std::string x86_brand() {
  if (cpuid(0x80000000).eax < 0x80000004) return std::string();
  char brand[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    CpuidBits part = cpuid(0x80000002 + i);
    std::memcpy(brand + std::size_t{16} * i, &part, 16);
  }
  std::string_view text(brand);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return std::string(text);
}

X86Description describe_x86() {
  X86Description d;
  CpuidBits leaf0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  d.vendor = vendor;
  const unsigned max_leaf = leaf0.eax;

  CpuidBits leaf1 = cpuid(1);
  unsigned base_family = (leaf1.eax >> 8) & 0xf;
  d.family = base_family == 0xf ? base_family + ((leaf1.eax >> 20) & 0xff) : base_family;
  d.model = (leaf1.eax >> 4) & 0xf;
  if (base_family == 0x6 || base_family == 0xf) d.model |= ((leaf1.eax >> 16) & 0xf) << 4;
  d.stepping = leaf1.eax & 0xf;

  d.mattr = x86_features(leaf1, max_leaf);
  d.level = x86_level(d.mattr);
  d.brand = x86_brand();
  return d;
}

} // namespace
#endif

#if defined(__aarch64__)
namespace {

// LLVM -mcpu names for Arm Ltd. (implementer 0x41) part numbers.
struct ArmPart {
  unsigned part;
  std::string_view name;
};
constexpr ArmPart kArmParts[] = {
    {0xd03, "cortex-a53"},  {0xd07, "cortex-a57"},  {0xd08, "cortex-a72"},  {0xd0b, "cortex-a76"},
    {0xd0c, "neoverse-n1"}, {0xd40, "neoverse-v1"}, {0xd41, "cortex-a78"},  {0xd44, "cortex-x1"},
    {0xd49, "neoverse-n2"}, {0xd4f, "neoverse-v2"}, {0xd8e, "neoverse-n3"}, {0xd84, "neoverse-v3"},
};

std::string_view arm_cpu_name() noexcept {
#if defined(__linux__)
  std::FILE* file = std::fopen("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "r");
  if (file == nullptr) return "generic";
  unsigned long long midr = 0;
  int matched = std::fscanf(file, "%llx", &midr);
  static_cast<void>(std::fclose(file));
  if (matched != 1) return "generic";
  unsigned implementer = static_cast<unsigned>((midr >> 24) & 0xff);
  unsigned part = static_cast<unsigned>((midr >> 4) & 0xfff);
  if (implementer == 0x41) {
    for (const ArmPart& entry : kArmParts) {
      if (entry.part == part) return entry.name;
    }
  }
  if (implementer == 0x46 && part == 0x001) return "a64fx";
#endif
  return "generic";
}

} // namespace
#endif

Result<Target> CpuBackend::detect_target(const BackendDevice& device) noexcept {
  Target target("llvm");
  target.set("keys", std::vector<std::string>{"cpu"});
  std::vector<std::string> mattr;
  std::string cpu_name = "generic";
  std::string triple;
  std::int64_t sve_bytes = 0;
#if defined(__x86_64__) || defined(__i386__)
  X86Description x86 = describe_x86();
  mattr = x86.mattr;
  std::string_view named = x86_cpu_name(x86.vendor, x86.family, x86.model, x86.stepping, x86.level);
  if (!named.empty()) {
    cpu_name = named;
  } else {
    cpu_name = x86.level > 1 ? "x86-64-v" + std::to_string(x86.level) : "x86-64";
  }
#if defined(__x86_64__)
  triple = "x86_64-pc-linux-gnu";
#else
  triple = "i686-pc-linux-gnu";
#endif
#elif defined(__aarch64__)
  cpu_name = arm_cpu_name();
  triple = "aarch64-unknown-linux-gnu";
#if defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  // Bit positions from the Linux arm64 ABI (asm/hwcap.h).
  if ((hwcap & (1ul << 1)) != 0) mattr.emplace_back("+neon");
  if ((hwcap & (1ul << 20)) != 0) mattr.emplace_back("+dotprod");
  if ((hwcap & (1ul << 10)) != 0) mattr.emplace_back("+fullfp16");
  if ((hwcap & (1ul << 22)) != 0) mattr.emplace_back("+sve");
  if ((hwcap2 & (1ul << 1)) != 0) mattr.emplace_back("+sve2");
  if ((hwcap2 & (1ul << 13)) != 0) mattr.emplace_back("+i8mm");
  if ((hwcap2 & (1ul << 14)) != 0) mattr.emplace_back("+bf16");
  if ((hwcap2 & (1ul << 23)) != 0) mattr.emplace_back("+sme");
#if defined(PR_SVE_GET_VL)
  if ((hwcap & (1ul << 22)) != 0) {
    int vl = prctl(PR_SVE_GET_VL);
    if (vl > 0) sve_bytes = vl & PR_SVE_VL_LEN_MASK;
  }
#endif
#else
  mattr.emplace_back("+neon");
#endif
#elif defined(__arm__)
  triple = "arm-none-eabi";
#elif defined(__hexagon__)
  triple = "hexagon-unknown-none-elf";
#elif defined(__riscv)
  triple = "riscv64-unknown-linux-gnu";
#else
  triple = "unknown-unknown-unknown";
#endif
  target.set("mtriple", triple);
  target.set("mcpu", cpu_name);
  target.set("mattr", mattr);
  Result<AttributeValue> name = get_attribute(device, Attribute::device_name);
  if (name.ok()) {
    if (const std::string* s = std::get_if<std::string>(&*name)) target.set("model", *s);
  }
#if defined(__x86_64__) || defined(__i386__)
  if (!x86.brand.empty()) target.set("model", x86.brand);
#endif
  Result<AttributeValue> cores = get_attribute(device, Attribute::multi_processor_count);
  if (cores.ok()) {
    if (const std::int64_t* n = std::get_if<std::int64_t>(&*cores)) target.set("num-cores", *n);
  }
  target.set("simd-32bit-lanes", simd_32bit_lanes(mattr, sve_bytes));
  return target;
}

} // namespace devrt::cpu
