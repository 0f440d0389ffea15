#pragma once
// The open plan: its JSON, where it lives on disk, its undo history and its latest evaluation.

#include "base/expected.h"
#include "base/jsonfields.h"
#include "cost/evaluation.h"
#include "plan/plan.h"

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
    /// A new untitled, clean document holding `planJson` (a built-in scenario), as newDefault()
    /// holds the default; the undo history is cleared. JSON that does not load is refused, the
    /// message names the field, and the open document is untouched.
    std::optional<QString> newFrom(const nlohmann::json &planJson);
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
    /// JSON that does not load, or could not be saved as it is (a non-finite number, nesting
    /// deeper than kMaxJsonDepth), is refused with the message naming the field; nothing changes.
    /// JSON equal to json() records nothing. A merge that lands back on the JSON before the step
    /// drops the step.
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

    /// Sets the JSON without recording a command (undo commands call this) and re-evaluates.
    /// JSON that does not load is ignored with a warning: commands only carry JSON apply() checked.
    void setJson(const nlohmann::json &planJson);

    /// Files larger than this are refused unread (a plan is a few kilobytes).
    static constexpr qint64 kMaxFileBytes = 16 * 1024 * 1024;
    /// JSON nested deeper than this is refused when read, and so also when applied or written.
    static constexpr int kMaxJsonDepth = 64;
    /// Reads a regular file of at most kMaxFileBytes (a FIFO would block, a device never end);
    /// the error's path is the file, its message says why. The one file reader of the GUI and the CLI.
    static model::Expected<std::string> readTextFile(const QString &path);
    /// Reads a JSON file of at most kMaxFileBytes nested at most kMaxJsonDepth levels. The
    /// error's path is the file, its message says why (with line and column for bad syntax).
    /// A key repeated in one object is refused unless `duplicates` says the last one wins (a
    /// Hugging Face config.json).
    static model::Expected<nlohmann::json>
    readJsonFile(const QString &path, model::json_fields::DuplicateKeys duplicates = model::json_fields::DuplicateKeys::Refuse);
    /// What a file holds, decided by its content, not its name: `"format": "meshplan/plan"` is a
    /// plan; an object with `model_type` or `architectures` is a Hugging Face config. A file that
    /// is neither (or not JSON) goes by its extension, .json a config, anything else a plan, so
    /// that the error names what it was taken for.
    enum class FileKind { Plan, HfConfig };
    static FileKind kindOf(const QString &path);
    /// Writes `json` atomically (QSaveFile), 2-space indented with a trailing newline. JSON that
    /// could not be read back (non-finite numbers, too deep, bad UTF-8) is refused and nothing is
    /// written; on any failure an existing file is left intact. The message names the file.
    static std::optional<QString> writeJsonFile(const QString &path, const nlohmann::json &json);
    /// Why `json` could not be written and read back as it is, or nothing; the error names the field.
    static std::optional<model::Error> checkStorable(const nlohmann::json &json);

signals:
    /// The JSON changed (an edit, undo/redo, open, new); evaluation() is already up to date.
    void changed();
    void pathChanged(const QString &path);
    void modifiedChanged(bool modified);

private:
    void setPath(const QString &path);

    nlohmann::json m_json;
    model::Plan m_plan;
    model::Expected<model::Evaluation> m_evaluation;
    QString m_path;
    QUndoStack *m_undo = nullptr;
};

} // namespace meshplan::app
