#pragma once
// Fills the three palettes: every catalog model, every chip and named cluster, every role.

#include "modelspec.h"

#include <nlohmann/json.hpp>

namespace meshplan::views {

class CardList;

/// Adds a card for every model of the built-in catalog.
void fillModelCards(CardList *list);
/// Adds a card for a model imported from a config.json; `modelRef` is what the plan stores.
void addImportedModelCard(CardList *list, const model::ModelSpec &spec, const nlohmann::json &modelRef);
/// Named clusters first, then one card per chip at its smallest usual size.
void fillHardwareCards(CardList *list);
void fillRoleCards(CardList *list);

} // namespace meshplan::views
