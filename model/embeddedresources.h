#pragma once
// JSON files from resources/, compiled into the model library by CMake.

#include <string_view>

namespace meshplan::model::embedded {

std::string_view chipCatalogJson();

} // namespace meshplan::model::embedded
