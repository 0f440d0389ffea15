#pragma once
// What a drag carries: a model, a cluster or a parallelism role, as MIME data with a small JSON
// payload. Encoding and decoding are plain functions so tests and drops share them.

#include "plan/placement.h"

#include <nlohmann/json.hpp>

#include <QString>

#include <optional>

class QMimeData;

namespace meshplan::views {

inline constexpr char kModelMime[] = "application/x-meshplan-model";
inline constexpr char kHardwareMime[] = "application/x-meshplan-hardware";
inline constexpr char kRoleMime[] = "application/x-meshplan-role";

/// `modelRef` as the plan's "model" value: a catalog id, inline object or {"hf_config": ...}.
QMimeData *modelMimeData(const nlohmann::json &modelRef);
/// `hardware` as the plan's "hardware" object.
QMimeData *hardwareMimeData(const nlohmann::json &hardware);
QMimeData *roleMimeData(model::Role role);

std::optional<nlohmann::json> decodeModel(const QMimeData *mime);
std::optional<nlohmann::json> decodeHardware(const QMimeData *mime);
std::optional<model::Role> decodeRole(const QMimeData *mime);
/// The first local file among the URLs (a config.json or a .meshplan dropped from a file manager).
std::optional<QString> decodeLocalFile(const QMimeData *mime);

} // namespace meshplan::views
