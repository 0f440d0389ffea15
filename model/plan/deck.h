#pragma once
// A presentation: an ordered list of slides, each a plan with a title and speaker notes (*.meshdeck).

#include "base/expected.h"
#include "plan/plan.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace meshplan::model {

class ChipCatalog;
class ModelCatalog;

struct DeckSlide {
    std::string title;
    std::string notes;
    /// The plan as the deck gives it: a path relative to the deck's folder, or inline.
    std::string planPath;
    nlohmann::json inlinePlan; ///< the plan object when inline (null otherwise)
    std::vector<std::string> charts; ///< up to two chart names to show beside the mesh; empty: the defaults
    std::optional<Plan> plan; ///< loaded; empty when the slide's plan is missing or bad
    std::string problem;      ///< why `plan` is empty, in words that name the file or the field
};

struct Deck {
    std::string title;
    std::vector<DeckSlide> slides;
};

inline constexpr int kDeckVersion = 1;

/// Reads the text of a slide's plan path (the caller resolves it against the deck's folder).
using PlanTextReader = std::function<Expected<std::string>(const std::string &relativePath)>;

/// Parses a deck. Only a file that is no deck at all (not JSON, another format, a newer version,
/// no "slides" array) is an Error; a slide whose plan is missing or bad is kept, with `problem`
/// saying why, so the deck still opens.
Expected<Deck> deckFromText(const std::string &text, const std::string &label, const PlanTextReader &readPlan,
                            const ChipCatalog &chips, const ModelCatalog &models);

/// The deck file: each slide's plan as it was given (its path, or inline).
nlohmann::json deckToJson(const Deck &deck);

/// A slide holding `plan` inline, titled with the plan's title.
DeckSlide slideFromPlan(const Plan &plan, const std::string &title);

} // namespace meshplan::model
