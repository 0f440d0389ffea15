#include "plan/plantitle.h"
#include "plandocument.h"
#include "atomicwrite.h"

#include "planeditcommand.h"

#include "base/embeddedresources.h"
#include "base/jsonfields.h"
#include "hardware/chipcatalog.h"
#include "transformer/modelcatalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QUndoStack>
#include <QtDebug>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace meshplan::app {

namespace m = meshplan::model;
using nlohmann::json;

namespace {

/// The built-in default plan as written in resources/default-plan.meshplan.
const json &defaultPlanJson()
{
    static const json document = json::parse(m::embedded::defaultPlanJson());
    return document;
}

m::Expected<m::Plan> loadPlan(const json &document)
{
    return m::planFromJson(document, m::ChipCatalog::builtin(), m::ModelCatalog::builtin());
}

QString shownPath(const QString &path)
{
    return QDir::toNativeSeparators(path);
}

/// nlohmann's messages start with "[json.exception.parse_error.101] "; the user needs the rest.
std::string withoutExceptionTag(std::string message)
{
    const auto start = message.find("[json.exception.");
    if (start == std::string::npos)
        return message;
    const auto end = message.find("] ", start);
    if (end == std::string::npos)
        return message;
    return message.erase(start, end + 2 - start);
}

// nlohmann::json keeps keys sorted, which put "format" and "version" in the middle of a saved
// plan; a file a person reads starts with what it is, then the model, the hardware and how it
// is split. Keys outside this list follow in alphabetical order.
nlohmann::ordered_json readableOrder(const nlohmann::json &json)
{
    if (!json.is_object())
        return nlohmann::ordered_json::parse(json.dump());
    static const char *const kFirst[] = {"format", "version", "title", "model", "hardware", "parallelism",
                                         "workload", "measured"};
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const char *key : kFirst)
        if (json.contains(key))
            out[key] = nlohmann::ordered_json::parse(json.at(key).dump());
    for (const auto &[key, value] : json.items())
        if (!out.contains(key))
            out[key] = nlohmann::ordered_json::parse(value.dump());
    return out;
}

// Two-space indented JSON, except that arrays of plain values stay on one line ("topology":
// [16, 16, 32] rather than five lines), as a person would write the file by hand.
void writeReadable(const nlohmann::ordered_json &value, int indent, std::string &out)
{
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    const std::string inner(static_cast<std::size_t>(indent) + 2, ' ');
    if (value.is_object() && !value.empty()) {
        out += "{\n";
        bool first = true;
        for (const auto &[key, item] : value.items()) {
            out += first ? "" : ",\n";
            first = false;
            out += inner + nlohmann::ordered_json(key).dump() + ": ";
            writeReadable(item, indent + 2, out);
        }
        out += "\n" + pad + "}";
    } else if (value.is_array() && !value.empty()) {
        const bool flat = std::none_of(value.begin(), value.end(),
                                       [](const nlohmann::ordered_json &e) { return e.is_structured(); });
        out += flat ? "[" : "[\n";
        bool first = true;
        for (const auto &item : value) {
            out += first ? "" : (flat ? ", " : ",\n");
            first = false;
            if (!flat)
                out += inner;
            writeReadable(item, indent + 2, out);
        }
        out += flat ? "]" : "\n" + pad + "]";
    } else {
        out += value.dump();
    }
}

} // namespace

PlanDocument::PlanDocument(QObject *parent)
    : QObject(parent)
    , m_evaluation(m::Error{"", "not evaluated yet"})
    , m_undo(new QUndoStack(this))
{
    connect(m_undo, &QUndoStack::cleanChanged, this, [this](bool clean) { emit modifiedChanged(!clean); });
    newDefault();
}

PlanDocument::~PlanDocument()
{
    // The stack (a child) clears itself when destroyed; nothing may reach this half-gone document.
    disconnect(m_undo, nullptr, this, nullptr);
}

void PlanDocument::newDefault()
{
    m_undo->clear();
    setPath(QString());
    setJson(defaultPlanJson());
}

std::optional<QString> PlanDocument::newFrom(const nlohmann::json &planJson)
{
    if (auto error = checkStorable(planJson))
        return QString::fromStdString(error->toString());
    if (const auto plan = loadPlan(planJson); !plan)
        return QString::fromStdString(plan.error().toString());
    m_undo->clear();
    setPath(QString());
    setJson(planJson);
    return std::nullopt;
}

std::optional<QString> PlanDocument::open(const QString &path)
{
    const auto document = readJsonFile(path);
    if (!document)
        return QString::fromStdString(document.error().toString());
    if (const auto plan = loadPlan(document.value()); !plan)
        return shownPath(path) + QStringLiteral(": ") + QString::fromStdString(plan.error().toString());
    m_undo->clear();
    setPath(QFileInfo(path).absoluteFilePath());
    setJson(document.value());
    return std::nullopt;
}

std::optional<QString> PlanDocument::saveAs(const QString &path)
{
    if (path.isEmpty())
        return tr("The plan has no file yet: choose where to save it.");
    if (auto error = writeJsonFile(path, m_json))
        return error;
    setPath(QFileInfo(path).absoluteFilePath());
    m_undo->setClean();
    return std::nullopt;
}

std::optional<QString> PlanDocument::restore(const nlohmann::json &planJson, const QString &path)
{
    if (auto error = checkStorable(planJson))
        return QString::fromStdString(error->toString());
    if (const auto plan = loadPlan(planJson); !plan)
        return QString::fromStdString(plan.error().toString());
    m_undo->clear();
    setPath(path.isEmpty() ? QString() : QFileInfo(path).absoluteFilePath());
    setJson(planJson);
    m_undo->resetClean();
    return std::nullopt;
}

std::optional<QString> PlanDocument::apply(const QString &label, const nlohmann::json &newJson, int mergeKey)
{
    // Checked before loading: a plan keeps unknown keys, and copying absurdly deep ones recurses.
    if (auto error = checkStorable(newJson))
        return QString::fromStdString(error->toString());
    const auto plan = loadPlan(newJson);
    if (!plan)
        return QString::fromStdString(plan.error().toString());
    nlohmann::json edited = newJson;
    // A generated title follows the plan until the user types their own; clearing it asks for
    // the generated one back. Otherwise exports would be stamped with a plan long gone.
    if (plan->title.empty() || (plan->title == m_plan.title && m::titleFollowsPlan(m_plan)))
        edited["title"] = m::generatedTitle(*plan);
    if (edited == m_json)
        return std::nullopt; // nothing to undo
    m_undo->push(new PlanEditCommand(this, label, m_json, edited, mergeKey));
    return std::nullopt;
}

QString PlanDocument::displayName() const
{
    return m_path.isEmpty() ? tr("Untitled") : QFileInfo(m_path).fileName();
}

bool PlanDocument::isModified() const
{
    return !m_undo->isClean();
}

void PlanDocument::setJson(const nlohmann::json &planJson)
{
    auto plan = loadPlan(planJson);
    if (!plan) {
        qWarning("PlanDocument::setJson: ignoring a plan that does not load (%s)",
                 plan.error().toString().c_str());
        return;
    }
    m_json = planJson;
    m_plan = std::move(plan).value();
    m_evaluation = m::evaluate(m_plan, m::CostMode::Achievable);
    emit changed();
}

void PlanDocument::setPath(const QString &path)
{
    if (path == m_path)
        return;
    m_path = path;
    emit pathChanged(m_path);
}

PlanDocument::FileKind PlanDocument::kindOf(const QString &path)
{
    if (const auto document = readJsonFile(path, m::json_fields::DuplicateKeys::LastWins);
        document && document->is_object()) {
        const auto format = document->find("format");
        if (format != document->end() && format->is_string() && format->get<std::string>() == "meshplan/plan")
            return FileKind::Plan;
        if (document->contains("model_type") || document->contains("architectures"))
            return FileKind::HfConfig;
    }
    return path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) ? FileKind::HfConfig : FileKind::Plan;
}

m::Expected<std::string> PlanDocument::readTextFile(const QString &path)
{
    const std::string shown = shownPath(path).toStdString();
    const QFileInfo info(path);
    if (!info.exists())
        return m::Error{shown, "does not exist"};
    if (info.isDir())
        return m::Error{shown, "is a folder, not a file"};
    // Opening a FIFO would wait for a writer forever (and a device could be endless).
    if (!info.isFile())
        return m::Error{shown, "is not a regular file (a pipe, a device or a socket)"};
    if (info.size() > kMaxFileBytes)
        return m::Error{shown, "is larger than 16 MiB; a plan or config is a few kilobytes"};
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return m::Error{shown, "cannot be opened (" + file.errorString().toStdString() + ")"};
    // Read one byte past the limit: the file may have grown since, or not be a regular file.
    const QByteArray bytes = file.read(kMaxFileBytes + 1);
    if (file.error() != QFileDevice::NoError)
        return m::Error{shown, "cannot be read (" + file.errorString().toStdString() + ")"};
    if (bytes.size() > kMaxFileBytes)
        return m::Error{shown, "is larger than 16 MiB; a plan or config is a few kilobytes"};
    return bytes.toStdString();
}

m::Expected<nlohmann::json> PlanDocument::readJsonFile(const QString &path, m::json_fields::DuplicateKeys duplicates)
{
    const auto text = readTextFile(path);
    if (!text)
        return text.error();
    const std::string shown = shownPath(path).toStdString();
    try {
        return m::json_fields::parse(*text, shown, kMaxJsonDepth, duplicates);
    } catch (const m::FieldError &e) {
        // A field's own path (a repeated key) goes into the message; the error's path is the file.
        const std::string message = withoutExceptionTag(e.error.message);
        return m::Error{shown, e.error.path == shown ? message : e.error.path + ": " + message};
    }
}

std::optional<QString> PlanDocument::writeJsonFile(const QString &path, const nlohmann::json &json)
{
    const QString shown = shownPath(path);
    if (auto error = checkStorable(json))
        return tr("%1: %2; nothing was written").arg(shown, QString::fromStdString(error->toString()));
    std::string text;
    writeReadable(readableOrder(json), 0, text);
    return views::writeFileAtomically(path, QByteArray::fromStdString(text + '\n'), shown);
}

std::optional<model::Error> PlanDocument::checkStorable(const nlohmann::json &document)
{
    // Iterative: the JSON comes from code, and may nest deeper than a recursion can bear.
    struct Item {
        const nlohmann::json *value;
        std::string path;
        int depth;
    };
    std::vector<Item> pending{{&document, std::string(), 0}};
    while (!pending.empty()) {
        const Item item = std::move(pending.back());
        pending.pop_back();
        const nlohmann::json &value = *item.value;
        if (value.is_number_float() && !std::isfinite(value.get<double>()))
            return m::Error{item.path, "is not a finite number (JSON cannot hold NaN or infinity)"};
        if (!value.is_structured())
            continue;
        if (item.depth >= kMaxJsonDepth)
            return m::Error{item.path, "nests deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
        if (value.is_object()) {
            for (auto it = value.begin(); it != value.end(); ++it)
                pending.push_back({&it.value(), m::json_fields::join(item.path, it.key()), item.depth + 1});
        } else {
            for (std::size_t i = 0; i < value.size(); ++i)
                pending.push_back({&value[i], item.path + "[" + std::to_string(i) + "]", item.depth + 1});
        }
    }
    try {
        (void)document.dump(); // strings must be valid UTF-8
    } catch (const nlohmann::json::exception &e) {
        return m::Error{"", "cannot be written as JSON (" + withoutExceptionTag(e.what()) + ")"};
    }
    return std::nullopt;
}

} // namespace meshplan::app
