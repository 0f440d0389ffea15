// The book's worked problems, one data row each (tests/data/book-*.json: chapters 1-3 and 12 in
// book-hardware.json, 4-6 in book-training.json, 7-8 in book-inference.json when present), each run
// through the model's calculator API and compared with the row's stated relative tolerance.
#include "cost/calculator.h"
#include "hardware/chipcatalog.h"

#include <QDir>
#include <QFile>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>

using nlohmann::json;
using namespace meshplan::model;

namespace {

json loadRows()
{
    json rows = json::array();
    const QDir dir(QStringLiteral(MESHPLAN_TEST_DATA));
    for (const auto &name : dir.entryList({QStringLiteral("book-*.json")}, QDir::Files, QDir::Name)) {
        QFile file(dir.filePath(name));
        if (!file.open(QIODevice::ReadOnly))
            qFatal("cannot open %s", qPrintable(name));
        for (auto &row : json::parse(file.readAll().toStdString())) {
            row["file"] = name.toStdString();
            rows.push_back(row);
        }
    }
    return rows;
}

// "collective0.op" -> result["collectives"][0]["op"]; "peak_flops.bf16" -> result["peak_flops"]["bf16"];
// "collectives" (when the result holds an array) -> its length.
const json *lookup(const json &result, const std::string &key, json &scratch)
{
    const json *node = &result;
    std::size_t start = 0;
    while (start <= key.size()) {
        const std::size_t end = std::min(key.find('.', start), key.size());
        std::string part = key.substr(start, end - start);
        if (part.rfind("collective", 0) == 0 && part.size() > 10 && std::isdigit(static_cast<unsigned char>(part[10]))) {
            const auto index = std::stoul(part.substr(10));
            if (!node->contains("collectives") || (*node)["collectives"].size() <= index)
                return nullptr;
            node = &(*node)["collectives"][index];
        } else {
            if (!node->is_object() || !node->contains(part))
                return nullptr;
            node = &(*node)[part];
        }
        start = end + 1;
    }
    if (node->is_array()) {
        scratch = node->size();
        return &scratch;
    }
    return node;
}

} // namespace

class TestBookProblems : public QObject
{
    Q_OBJECT

private slots:
    void problem_data()
    {
        QTest::addColumn<QString>("row");
        const json rows = loadRows();
        QVERIFY(rows.size() >= 60);
        for (const auto &row : rows)
            QTest::newRow(row.at("id").get<std::string>().c_str()) << QString::fromStdString(row.dump());
    }

    void problem()
    {
        QFETCH(QString, row);
        const json r = json::parse(row.toStdString());
        const CostMode mode = r.value("mode", std::string("ideal")) == "achievable" ? CostMode::Achievable : CostMode::Ideal;
        const auto result = calculate(r.at("call").get<std::string>(), r.at("args"), mode, ChipCatalog::builtin());
        QVERIFY2(result.hasValue(), result ? "" : result.error().toString().c_str());
        const double rtol = r.value("rtol", 0.002);
        for (auto it = r.at("expect").begin(); it != r.at("expect").end(); ++it) {
            json scratch;
            const json *actual = lookup(result.value(), it.key(), scratch);
            const std::string context = it.key() + " (" + r.value("source", "") + "; " + r.value("book", "") + ")";
            QVERIFY2(actual, ("missing " + context + " in " + result.value().dump()).c_str());
            if (it->is_string()) {
                std::string got = actual->is_boolean() ? (actual->get<bool>() ? "true" : "false")
                                                       : actual->is_string() ? actual->get<std::string>() : actual->dump();
                QVERIFY2(got == it->get<std::string>(), (context + ": got " + got + ", want " + it->get<std::string>()).c_str());
            } else {
                QVERIFY2(actual->is_number(), (context + ": not a number: " + actual->dump()).c_str());
                const double want = it->get<double>();
                const double got = actual->get<double>();
                const bool ok = want == 0 ? got == 0 : std::fabs(got - want) <= rtol * std::fabs(want);
                QVERIFY2(ok, (context + ": got " + std::to_string(got) + ", want " + std::to_string(want)
                              + " within " + std::to_string(rtol * 100) + "%").c_str());
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestBookProblems)
#include "tst_bookproblems.moc"
