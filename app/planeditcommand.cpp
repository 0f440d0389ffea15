#include "planeditcommand.h"

#include "plandocument.h"

namespace meshplan::app {

PlanEditCommand::PlanEditCommand(PlanDocument *document, const QString &label, nlohmann::json before,
                                 nlohmann::json after, int mergeKey)
    : QUndoCommand(label)
    , m_document(document)
    , m_before(std::move(before))
    , m_after(std::move(after))
    , m_mergeKey(mergeKey < 0 ? -1 : mergeKey)
    , m_lastEdit(std::chrono::steady_clock::now())
{}

void PlanEditCommand::undo()
{
    m_document->setJson(m_before);
}

void PlanEditCommand::redo()
{
    m_document->setJson(m_after);
}

bool PlanEditCommand::mergeWith(const QUndoCommand *other)
{
    // QUndoStack only offers commands whose id() equals ours (and never -1).
    const auto *edit = dynamic_cast<const PlanEditCommand *>(other);
    if (edit == nullptr || edit->m_document != m_document || m_mergeKey < 0 || edit->m_mergeKey != m_mergeKey)
        return false;
    if (edit->m_lastEdit - m_lastEdit > kMergeWindow)
        return false;
    m_after = edit->m_after;
    m_lastEdit = edit->m_lastEdit;
    setText(edit->text()); // the newest step says what the degrees became

    setObsolete(m_after == m_before);
    return true;
}

QString PlanEditCommand::roleDropLabel(model::Role role, const QString &axis, bool split)
{
    const QString name = QString::fromStdString(std::string(model::roleName(role)));
    return split ? QObject::tr("Split axis %1 with %2").arg(axis, name) : QObject::tr("Place %2 on axis %1").arg(axis, name);
}

} // namespace meshplan::app
