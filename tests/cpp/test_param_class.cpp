// Parameter classes read from mangled kernel names (names produced by g++/NVRTC for the
// declarations in the comments), and the names the reader must refuse rather than guess.
#include <gtest/gtest.h>

#include "nanocuda/compile/param_class.h"

namespace nanocuda {
namespace {

using C = ParamClass;
std::vector<C> classes(const char* name) { return param_classes_from_mangled_name(name); }

TEST(ParamClass, Saxpy) {
  // void saxpy(float, const float*, const float*, float*, unsigned long)
  EXPECT_EQ(classes("_Z5saxpyfPKfS0_Pfm"),
            (std::vector<C>{C::Floating, C::Pointer, C::Pointer, C::Pointer, C::Integer}));
}

TEST(ParamClass, StructsAndSubstitutions) {
  // void g(const CUtensorMap_st, int, const CUtensorMap_st, double*, double)
  EXPECT_EQ(classes("_Z1g14CUtensorMap_stiS_Pdd"),
            (std::vector<C>{C::Aggregate, C::Integer, C::Aggregate, C::Pointer, C::Floating}));
  // void h(ns::A*, ns::E, ns::E, bool, char, signed char, __int128, long long,
  //        const double* const*, float*&)
  EXPECT_EQ(classes("_Z1hPN2ns1AENS_1EES2_bcanxPKPKdRPf"),
            (std::vector<C>{C::Pointer, C::Aggregate, C::Aggregate, C::Integer, C::Integer,
                            C::Integer, C::Integer, C::Integer, C::Pointer, C::Pointer}));
  // void ns::f(ns::A*, const ns::A*, ns::A): the function's own name is not a candidate.
  EXPECT_EQ(classes("_ZN2ns1fEPNS_1AEPKS0_S0_"),
            (std::vector<C>{C::Pointer, C::Pointer, C::Aggregate}));
  // void k(_Float16, short, const volatile float* __restrict__); static void s(int*)
  EXPECT_EQ(classes("_Z1kDF16_sPVKf"), (std::vector<C>{C::Floating, C::Integer, C::Pointer}));
  EXPECT_EQ(classes("_ZL1sPi"), (std::vector<C>{C::Pointer}));
  EXPECT_EQ(classes("_Z4noopv"), (std::vector<C>{}));
}

TEST(ParamClass, RefusesWhatItDoesNotFollow) {
  for (const char* name : {"saxpy", "", "_Z", "_Z5sax", "_Z6kernelIfEvPT_i", "_Z1fSt4pair",
                           "_Z1fDv4_f", "_Z1fS5_", "_Z1fPN2ns1AIiEE", "_Z999999999999f",
                           "_Z1fP", "_Z1fK", "_ZN1fE", "_Z1fS_"})
    EXPECT_TRUE(classes(name).empty()) << name;
}

TEST(ParamClass, NeverReadsPastTheEnd) {
  // Every prefix of valid names, and a few mutations, must return without crashing.
  const std::string names[] = {"_Z5saxpyfPKfS0_Pfm", "_Z1hPN2ns1AENS_1EES2_bcanxPKPKdRPf",
                               "_ZN2ns1fEPNS_1AEPKS0_S0_"};
  for (const std::string& n : names)
    for (std::size_t len = 0; len <= n.size(); ++len) {
      (void)classes(n.substr(0, len).c_str());
      std::string mutated = n;
      if (len < n.size()) mutated[len] = 'S';
      (void)classes(mutated.c_str());
    }
}

}  // namespace
}  // namespace nanocuda
