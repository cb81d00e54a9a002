// The version of Meridian's programs, as each prints it for `--version`
// ("meridian 0.1.0"): one number for everything built from this tree,
// raised here and only here at a release.
#ifndef MERIDIAN_COMMON_VERSION_H_
#define MERIDIAN_COMMON_VERSION_H_

namespace meridian {

inline constexpr char kVersion[] = "0.1.0";

}  // namespace meridian

#endif  // MERIDIAN_COMMON_VERSION_H_
