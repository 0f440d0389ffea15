#pragma once
// The title a plan carries until its user types one: the model, the cluster and the layout.

#include "plan/plan.h"

#include <string>

namespace meshplan::model {

/// "LLaMA-3 70B training on 8192 TPU v5p, 16x16x32: fsdp 1024 x context 2 x tensor 4". Roles
/// are listed outermost first, as the book writes a mesh; degree-1 roles are left out.
std::string generatedTitle(const Plan &plan);

/// Whether the plan's title is still the generated one (or empty), so that it should follow
/// the plan through an edit rather than be kept as the user's own.
bool titleFollowsPlan(const Plan &plan);

} // namespace meshplan::model
