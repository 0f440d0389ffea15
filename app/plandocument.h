#pragma once
// The open plan: its JSON, where it lives on disk, its undo history and its latest evaluation.

#include "evaluation.h"
#include "expected.h"
#include "plan.h"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QString>

#include <optional>

class QUndoStack;

namespace meshplan::app {

/// A plan being edited. The JSON is the truth (unknown keys survive a save); every change goes
/// through apply() as an undoable command and is re-evaluated at once. The document only ever
/// holds JSON that loads, so whatever it saves can be opened again.
class PlanDocument : public QObject
{
    Q_OBJECT

public:
    explicit PlanDocument(QObject *parent = nullptr);
    ~PlanDocument() override;

    /// The built-in default plan, untitled and clean; the undo history is cleared.
    void newDefault();
    /// Reads `path`. A file that is not JSON, of another format, of a newer version or with a
    /// bad field is refused: the returned message names the file and the field, and the open
    /// document (JSON, path, history) is untouched.
    std::optional<QString> open(const QString &path);
    /// Writes the plan atomically (QSaveFile) to `path` and makes it the document's path; on
    /// failure the old file is intact and the message says why.
    std::optional<QString> saveAs(const QString &path);
    std::optional<QString> save() { return saveAs(m_path); }
    /// Replaces the document with `planJson` as if it had been opened from `path` (recovery);
    /// the document is marked modified. The JSON must load, else the message names the field.
    std::optional<QString> restore(const nlohmann::json &planJson, const QString &path);

    /// Pushes an undoable change to `newJson` named `label`. Changes with the same non-negative
    /// `mergeKey` made one after another merge into one undo step (a spin box being scrolled).
    /// JSON that does not load is refused with the message naming the field; nothing changes.
    std::optional<QString> apply(const QString &label, const nlohmann::json &newJson, int mergeKey = -1);

    const nlohmann::json &json() const { return m_json; }
    /// The plan as loaded from json(); always valid.
    const model::Plan &plan() const { return m_plan; }
    /// The latest evaluation, or the reason the plan cannot be evaluated.
    const model::Expected<model::Evaluation> &evaluation() const { return m_evaluation; }

    QString path() const { return m_path; }
    /// "name.meshplan", or "Untitled" for a plan never saved.
    QString displayName() const;
    bool isModified() const;
    QUndoStack *undoStack() const { return m_undo; }

    /// Sets the JSON without recording a command (undo commands call this).
    void setJson(const nlohmann::json &planJson);

signals:
    /// The JSON changed (an edit, undo/redo, open, new); evaluation() is already up to date.
    void changed();
    void pathChanged(const QString &path);
    void modifiedChanged(bool modified);

private:
    nlohmann::json m_json;
    model::Plan m_plan;
    model::Expected<model::Evaluation> m_evaluation;
    QString m_path;
    QUndoStack *m_undo = nullptr;
};

} // namespace meshplan::app
