#pragma once
// One undoable change of a PlanDocument: the plan JSON before and after.

#include "plan/placement.h"

#include <nlohmann/json.hpp>

#include <QUndoCommand>

#include <chrono>

namespace meshplan::app {

class PlanDocument;

/// Swaps the document's JSON between `before` and `after`. Commands with the same non-negative
/// merge key pushed one after another within kMergeWindow merge into one step (a spin box
/// being scrolled); a pause longer than that starts a new step, so two values typed a while
/// apart stay two steps. A merge that lands back on `before` makes the step obsolete, so the
/// stack drops it.
class PlanEditCommand : public QUndoCommand
{
public:
    static constexpr std::chrono::milliseconds kMergeWindow{1500};

    /// `document` must outlive the command (its undo stack owns it).
    PlanEditCommand(PlanDocument *document, const QString &label, nlohmann::json before, nlohmann::json after,
                    int mergeKey = -1);

    void undo() override;
    void redo() override;
    /// The undo step's name for a role dropped on an axis ("Place tensor on axis y", "Split axis
    /// x with data"): the same in the window and in presenter mode.
    static QString roleDropLabel(model::Role role, const QString &axis, bool split);

    /// The merge key, or -1 (never merged).
    int id() const override { return m_mergeKey; }
    bool mergeWith(const QUndoCommand *other) override;

private:
    PlanDocument *m_document;
    nlohmann::json m_before;
    nlohmann::json m_after;
    int m_mergeKey;
    std::chrono::steady_clock::time_point m_lastEdit; ///< when this step last changed
};

} // namespace meshplan::app
