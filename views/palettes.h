#pragma once
// Fills the three palettes: every catalog model, every chip and named cluster, every role.

#include "transformer/modelspec.h"

#include <nlohmann/json.hpp>

#include <QString>

class QListWidgetItem;

namespace meshplan::views {

class CardList;

/// Adds a card for every model of the built-in catalog.
void fillModelCards(CardList *list);
/// Adds a card for a model imported from a config.json, titled `name` ("Meta-Llama-3-8B");
/// `modelRef` is what the plan stores. A card with the same `modelRef` is not added twice: the
/// one there is returned (and scrolled to).
QListWidgetItem *addImportedModelCard(CardList *list, const model::ModelSpec &spec, const nlohmann::json &modelRef,
                                      const QString &name);
/// Named clusters first, then one card per chip at its smallest usual size.
void fillHardwareCards(CardList *list);
void fillRoleCards(CardList *list);

} // namespace meshplan::views
