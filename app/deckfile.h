#pragma once
// Deck files (*.meshdeck) on disk: read with slide plans resolved against the deck's folder, written atomically.

#include "base/expected.h"
#include "plan/deck.h"

#include <QString>

#include <optional>

namespace meshplan::app {

/// Reads the deck at `path`. Slides name plan files relative to the deck's folder; one that is
/// missing or bad is marked on its slide (DeckSlide::problem), never refusing the whole deck.
model::Expected<model::Deck> loadDeck(const QString &path);

/// Writes `deck` to `path` atomically (all of it or nothing); a message naming the file and the
/// cause on failure.
std::optional<QString> saveDeck(const QString &path, const model::Deck &deck);

/// True for a file name the deck reader should take (*.meshdeck).
bool isDeckFile(const QString &path);

} // namespace meshplan::app
