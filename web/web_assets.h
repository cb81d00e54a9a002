// The web page's files (web/index.html, app.js, app.css and
// third_party/echarts), compiled into the collector by embed_assets.py so
// that it serves them with nothing to install or fetch at run time.
#ifndef MERIDIAN_WEB_WEB_ASSETS_H_
#define MERIDIAN_WEB_WEB_ASSETS_H_

#include "absl/strings/string_view.h"

namespace meridian {

struct WebAsset {
  const char* path;  // "/app.js"
  const char* type;  // its Content-Type
  absl::string_view body;
  absl::string_view gzip;  // the same, gzip-compressed
};

// The asset served at `path`, or nullptr.
const WebAsset* FindWebAsset(absl::string_view path);

}  // namespace meridian

#endif  // MERIDIAN_WEB_WEB_ASSETS_H_
