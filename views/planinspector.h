#pragma once
// The plan inspector: the plan's hardware, parallelism and workload as editable fields, and the
// summary of its evaluation. Edits leave as intent signals; the document decides.

#include "base/expected.h"
#include "cost/evaluation.h"
#include "plan/plan.h"

#include <nlohmann/json.hpp>

#include <QWidget>

#include <functional>
#include <vector>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace meshplan::views {

class PlanInspector : public QWidget
{
    Q_OBJECT

public:
    explicit PlanInspector(QWidget *parent = nullptr);
    ~PlanInspector() override;

    /// Shows `planJson` (the document's JSON), its loaded `plan` and its evaluation.
    void setPlan(const nlohmann::json &planJson, const model::Plan &plan,
                 const model::Expected<model::Evaluation> &evaluation);

    /// The editor of the field at JSON pointer `pointer` ("/workload/global_batch"), or nullptr.
    QWidget *editorFor(const std::string &pointer) const;
    QSpinBox *degreeEditor(model::Role role) const;
    QString summaryText() const;
    /// Shows the operation picked in a chart (rich text), or hides the box for an empty string.
    void setSelectedOperation(const QString &html);
    QString selectedOperationText() const;
    /// An edit of the field at `pointer` to `value` was refused: the field shows `value` anyway,
    /// marked, with `why` beside it, until the plan changes. The plan is not touched.
    void showRefusal(const std::string &pointer, const nlohmann::json &value, const QString &why);
    /// The field marked as refused or as the reason the plan cannot be evaluated ("" for none),
    /// and the reason shown beside it.
    std::string markedField() const { return m_markedPointer; }
    QString markedReason() const;

signals:
    /// The user clicked the number of summary row `row` (a key of planSummaryHtml: "step_time").
    void summaryRowClicked(const QString &row);
    /// Set the field at `pointer` to `value`; edits of the same field merge (`mergeKey`).
    void fieldEdited(const QString &label, const std::string &pointer, const nlohmann::json &value, int mergeKey);
    /// Set `role`'s degree; steps of the same role's box merge (`mergeKey`).
    void degreeEdited(model::Role role, int degree, int mergeKey);
    /// The cluster's shape or size changed (same chip).
    void hardwareEdited(const nlohmann::json &hardware);
    /// Swap the chip for catalog chip `chipId`, keeping the cluster's size where it can.
    void chipEdited(const std::string &chipId);
    void kindEdited(const std::string &kind);
    /// Serve "interleaved" or "disaggregated" (the document fills in prefill chips if needed).
    void servingEdited(const std::string &mode);

protected:
    /// Keeps Undo and Redo for the document: a focused field would take them for its own text.
    bool eventFilter(QObject *watched, QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    struct Field;
    void addField(QFormLayout *form, const QString &label, const std::string &pointer, QWidget *editor,
                  const QString &toolTip, std::function<void(const nlohmann::json &)> show);
    QSpinBox *intEditor(const QString &label, const std::string &pointer, int min, int max);
    QComboBox *choiceEditor(const QString &label, const std::string &pointer, const QStringList &choices);
    /// An optional boolean key as a combo: "stack's default" (the key removed), then `whenTrue`
    /// and `whenFalse`; each choice is one undoable edit named `undoText`.
    QComboBox *optionalBoolField(QWidget *parent, QFormLayout *form, const QString &label, const std::string &pointer,
                                 const QString &whenTrue, const QString &whenFalse, const QString &toolTip,
                                 const QString &undoText);
    /// A boolean key as a check box; each toggle is one undoable edit named `undoText`. Unchecked
    /// writes false when `writeFalse`, else removes the key (its default is false).
    QCheckBox *checkField(QWidget *parent, QFormLayout *form, const QString &label, const std::string &pointer,
                          const QString &toolTip, const QString &undoText, bool writeFalse);
    /// An optional string key as a combo: `unset` first (the key removed), then `choices` as
    /// (shown text, value written); each choice is one undoable edit named `undoText`.
    QComboBox *optionalChoiceField(QWidget *parent, QFormLayout *form, const QString &label, const std::string &pointer,
                                   const QString &unset, const std::vector<std::pair<QString, QString>> &choices,
                                   const QString &toolTip, const QString &undoText);
    void emitHardware();
    void emitChip();
    /// The editor of a field or degree by JSON pointer ("/parallelism/tensor" too).
    QWidget *editorAt(const std::string &pointer) const;
    void markField(const std::string &pointer, const QString &why);
    void clearMark();
    void updateSummaryText();
    static void tint(QWidget *editor);

    std::vector<Field> m_fields;
    int m_nextMergeKey = 100;
    nlohmann::json m_json;
    QLineEdit *m_title = nullptr;
    QComboBox *m_chip = nullptr;
    QLineEdit *m_shape = nullptr;
    QSpinBox *m_slices = nullptr;
    QSpinBox *m_nodes = nullptr;
    QSpinBox *m_gpusPerNode = nullptr;
    QWidget *m_tpuRows = nullptr;
    QWidget *m_gpuRows = nullptr;
    QComboBox *m_kind = nullptr;
    std::array<QSpinBox *, 6> m_degrees{};
    QLabel *m_chips = nullptr;
    QGroupBox *m_training = nullptr;
    QGroupBox *m_inference = nullptr;
    QLabel *m_model = nullptr;
    QLabel *m_summary = nullptr;
    QString m_summaryHtml; ///< with kSummaryLinkColor where the palette's text colour goes
    QGroupBox *m_selectedBox = nullptr;
    QLabel *m_selected = nullptr;
    QFormLayout *m_parallelismForm = nullptr;
    std::vector<QWidget *> m_trainingOnly; ///< rows of the parallelism form that serving hides
    QLabel *m_note = nullptr;              ///< why the marked field is refused, in the row below it
    std::string m_markedPointer;
};

} // namespace meshplan::views
