#pragma once
// JSON files from resources/, compiled into the model library by CMake.

#include <string_view>

namespace meshplan::model::embedded {

std::string_view chipCatalogJson();
std::string_view modelCatalogJson();
std::string_view defaultPlanJson();
std::string_view scenarioCatalogJson();
std::string_view trackRecordJson();

} // namespace meshplan::model::embedded
