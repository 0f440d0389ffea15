#pragma once
// How each parallelism role looks on screen: its colour, its label and a line on what it does.

#include "plan/placement.h"

#include <QColor>
#include <QString>

namespace meshplan::views {

QColor roleColor(model::Role role);
QString roleLabel(model::Role role);       ///< "Tensor", "FSDP", ...
QString roleDescription(model::Role role); ///< one sentence, for tooltips

} // namespace meshplan::views
