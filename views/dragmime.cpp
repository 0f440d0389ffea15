#include "dragmime.h"

#include <QMimeData>
#include <QUrl>

namespace meshplan::views {

namespace {

QMimeData *jsonMime(const char *type, const nlohmann::json &payload, const std::string &text)
{
    auto *mime = new QMimeData;
    const std::string bytes = payload.dump();
    mime->setData(QString::fromLatin1(type), QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size())));
    // Plain text too, so a drop on a text editor shows what was dragged.
    mime->setText(QString::fromStdString(text));
    return mime;
}

std::optional<nlohmann::json> jsonFrom(const QMimeData *mime, const char *type)
{
    if (!mime || !mime->hasFormat(QString::fromLatin1(type)))
        return std::nullopt;
    const QByteArray bytes = mime->data(QString::fromLatin1(type));
    auto value = nlohmann::json::parse(bytes.constBegin(), bytes.constEnd(), nullptr, false);
    if (value.is_discarded())
        return std::nullopt;
    return value;
}

} // namespace

QMimeData *modelMimeData(const nlohmann::json &modelRef)
{
    return jsonMime(kModelMime, modelRef, modelRef.is_string() ? modelRef.get<std::string>() : modelRef.dump());
}

QMimeData *hardwareMimeData(const nlohmann::json &hardware)
{
    return jsonMime(kHardwareMime, hardware, hardware.dump());
}

QMimeData *roleMimeData(model::Role role)
{
    const std::string name(model::roleName(role));
    return jsonMime(kRoleMime, name, name);
}

std::optional<nlohmann::json> decodeModel(const QMimeData *mime)
{
    auto value = jsonFrom(mime, kModelMime);
    if (value && !value->is_string() && !value->is_object())
        return std::nullopt;
    return value;
}

std::optional<nlohmann::json> decodeHardware(const QMimeData *mime)
{
    auto value = jsonFrom(mime, kHardwareMime);
    if (value && !value->is_object())
        return std::nullopt;
    return value;
}

std::optional<model::Role> decodeRole(const QMimeData *mime)
{
    const auto value = jsonFrom(mime, kRoleMime);
    if (!value || !value->is_string())
        return std::nullopt;
    return model::parseRole(value->get<std::string>());
}

std::optional<QString> decodeLocalFile(const QMimeData *mime)
{
    if (!mime || !mime->hasUrls())
        return std::nullopt;
    for (const QUrl &url : mime->urls())
        if (url.isLocalFile())
            return url.toLocalFile();
    return std::nullopt;
}

} // namespace meshplan::views
