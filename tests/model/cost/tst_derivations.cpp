// Every number explains itself (issue 18, plan-format.md "Derivations"): for every plan the tests
// hold, in both cost modes, each number the contract names has a derivation whose formula parses,
// uses exactly its values, evaluates to its value, and whose value is the number in the result.
// The book's worked problems that evaluate whole plans are reproduced through their derivations.
#include "base/derivation.h"
#include "base/expression.h"
#include "cost/evaluation.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "plan/scenariocatalog.h"
#include "transformer/modelcatalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

using nlohmann::json;
using namespace meshplan::model;

namespace {

const QString kData = QStringLiteral(MESHPLAN_TEST_DATA);

std::string readText(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot open %s", qPrintable(path));
    return file.readAll().toStdString();
}

QStringList files(const QString &folder, const QString &pattern)
{
    QStringList out;
    const QDir dir(kData + QLatin1Char('/') + folder);
    for (const QString &name : dir.entryList({pattern}, QDir::Files, QDir::Name))
        out << folder + QLatin1Char('/') + name;
    return out;
}

/// The number at a derivation path of the result: "step.time_s", "collectives[3].exposed_s",
/// "terms.layer_forward_s"; null where the result has no number there.
const json *at(const json &result, const std::string &path)
{
    const json *node = resultAt(result, path);
    return node && node->is_number() ? node : nullptr;
}

/// Equal within relative 1e-9, or absolutely within `absolute` (1e-12 near zero; 0.5 for the
/// byte and token counts the result rounds to integers).
bool close(double a, double b, double absolute)
{
    return std::fabs(a - b) <= std::max(1e-9 * std::max(std::fabs(a), std::fabs(b)), absolute);
}

std::string number(double v)
{
    std::ostringstream s;
    s.precision(12);
    s << v;
    return s.str();
}

/// The paths the contract says must have a derivation, as the result has them.
std::vector<std::string> requiredPaths(const json &result)
{
    std::vector<std::string> paths;
    for (const char *key : {"params", "grads", "optimizer", "activations", "kv_cache", "total", "capacity"})
        paths.push_back(std::string("memory_per_chip.") + key);
    for (const char *block : {"step", "inference"})
        if (result.contains(block))
            for (const auto &[key, value] : result[block].items())
                if (value.is_number())
                    paths.push_back(std::string(block) + "." + key);
    for (const char *key : {"mfu", "tokens_per_s"})
        if (result.contains(key))
            paths.push_back(key);
    for (std::size_t i = 0; i < result["collectives"].size(); ++i) {
        paths.push_back("collectives[" + std::to_string(i) + "].time_s");
        paths.push_back("collectives[" + std::to_string(i) + "].exposed_s");
    }
    return paths;
}

/// One problem of one evaluation. `pattern` is the path with collective indices as [i], so the
/// same gap in many plans is reported once with its count.
struct Problem {
    std::string pattern;
    std::string what;
    std::string where; ///< file [mode] path
};

std::string pattern(const std::string &path)
{
    std::string out;
    for (std::size_t i = 0; i < path.size(); ++i) {
        if (path[i] == '[') {
            out += "[i]";
            i = path.find(']', i);
            if (i == std::string::npos)
                break;
        } else {
            out += path[i];
        }
    }
    return out;
}

/// Checks one derivation against the contract and the result; appends what is wrong.
void checkDerivation(const std::string &path, const Derivation &d, const Derivations &all, const json &result,
                     const std::string &where, std::vector<Problem> &problems)
{
    const auto problem = [&](const std::string &what) { problems.push_back({pattern(path), what, where + " " + path}); };
    const auto parsed = Expression::parse(d.expression);
    if (!parsed) {
        problem("formula does not parse: " + parsed.error().message);
        return;
    }
    std::map<std::string, double> values;
    for (const auto &v : d.values) {
        if (values.count(v.name))
            problem("value '" + v.name + "' is listed twice");
        values[v.name] = v.value;
        if (!v.from.empty() && !all.count(v.from))
            problem("value '" + v.name + "' comes from " + v.from + ", which has no derivation");
    }
    const auto names = parsed->names();
    for (const auto &name : names)
        if (!values.count(name))
            problem("formula \"" + d.expression + "\" uses '" + name + "', which is not among its values");
    for (const auto &[name, value] : values)
        if (std::find(names.begin(), names.end(), name) == names.end())
            problem("value '" + name + "' is not used by \"" + d.expression + "\"");
    if (const auto evaluated = parsed->evaluate(values); evaluated && !close(*evaluated, d.value, 1e-12))
        problem("\"" + d.expression + "\" gives " + number(*evaluated) + ", not its value " + number(d.value));
    if (const json *n = at(result, path)) {
        const double inResult = n->get<double>();
        if (!close(d.value, inResult, n->is_number_integer() ? 0.5 : 1e-12))
            problem("value " + number(d.value) + " is not the result's " + number(inResult));
    } else {
        problem("the result has no number at this path");
    }
    if (bookChapterTitle(d.chapter).empty())
        problem("chapter \"" + d.chapter + "\" is not a chapter of the book");
    if (d.words.empty())
        problem("no words");
    if (d.section.empty())
        problem("no section");
}

/// All problems of one plan (`label`: its file or scenario) in one mode.
void checkPlan(const std::string &label, const Expected<Plan> &plan, CostMode mode, std::vector<Problem> &problems,
               int &paths, int &checked)
{
    const std::string where = label + (mode == CostMode::Ideal ? " [ideal]" : " [achievable]");
    if (!plan) {
        problems.push_back({"(plan)", "does not load: " + plan.error().toString(), where});
        return;
    }
    Derivations derivations;
    const auto e = evaluate(plan.value(), mode, &derivations);
    if (!e) {
        problems.push_back({"(plan)", "does not evaluate: " + e.error().toString(), where});
        return;
    }
    const bool training = plan->kind == WorkloadKind::Training;
    const json result = evaluationToJson(e.value(), training);

    // Asking for derivations changes no number of the result.
    const auto plain = evaluate(plan.value(), mode);
    json withoutTerms = result;
    withoutTerms.erase("terms");
    if (!plain || evaluationToJson(plain.value(), training) != withoutTerms)
        problems.push_back({"(result)", "differs when derivations are recorded", where});

    for (const auto &path : requiredPaths(result)) {
        ++paths;
        if (!derivations.count(path))
            problems.push_back({pattern(path), "no derivation", where + " " + path});
    }
    for (const auto &[path, d] : derivations)
        checkDerivation(path, d, derivations, result, where, problems);
    checked += int(derivations.size());
}

/// Problems grouped by path and kind, each with its count and a few of the evaluations it is in.
std::string report(const std::vector<Problem> &problems)
{
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> grouped;
    for (const auto &p : problems)
        grouped[{p.pattern, p.what}].push_back(p.where);
    std::string out = std::to_string(problems.size()) + " problems in " + std::to_string(grouped.size()) + " kinds:";
    for (const auto &[key, wheres] : grouped) {
        out += "\n  " + key.first + ": " + key.second + " (" + std::to_string(wheres.size()) + "x, e.g. " + wheres[0];
        if (wheres.size() > 1)
            out += "; " + wheres[wheres.size() - 1];
        out += ")";
    }
    return out;
}

/// The book's answer for a number of a whole plan, through its derivation: the recorded value and
/// the formula re-evaluated both within the case's relative tolerance.
void checkBookAnswer(const std::string &where, const Derivations &derivations, const std::string &path, double want,
                     double rtol, std::vector<std::string> &failures)
{
    const auto d = derivations.find(path);
    if (d == derivations.end()) {
        failures.push_back(where + ": no derivation at " + path);
        return;
    }
    const auto within = [&](double got) {
        return want == 0 ? got == 0 : std::fabs(got - want) <= std::max(rtol, 1e-9) * std::fabs(want);
    };
    if (!within(d->second.value))
        failures.push_back(where + ": " + path + " derivation value " + number(d->second.value) + ", book "
                           + number(want) + " within " + number(rtol));
    std::map<std::string, double> values;
    for (const auto &v : d->second.values)
        values[v.name] = v.value;
    const auto parsed = Expression::parse(d->second.expression);
    const auto evaluated = parsed ? parsed->evaluate(values) : Expected<double>(parsed.error());
    if (!evaluated)
        failures.push_back(where + ": " + path + " formula: " + evaluated.error().message);
    else if (!within(*evaluated))
        failures.push_back(where + ": " + path + " formula \"" + d->second.expression + "\" gives "
                           + number(*evaluated) + ", book " + number(want));
}

/// "collective0.time_s" (the book rows' spelling) -> "collectives[0].time_s".
std::string derivationPath(const std::string &key)
{
    if (key.rfind("collective", 0) == 0 && key.size() > 10 && std::isdigit(static_cast<unsigned char>(key[10]))) {
        const std::size_t dot = key.find('.');
        return "collectives[" + key.substr(10, dot - 10) + "]" + key.substr(dot);
    }
    return key;
}

bool contractPath(const std::string &path)
{
    for (const char *prefix : {"memory_per_chip.", "step.", "inference.", "collectives["})
        if (path.rfind(prefix, 0) == 0)
            return path != "memory_per_chip.fits";
    return path == "mfu" || path == "tokens_per_s";
}

} // namespace

class TestDerivations : public QObject
{
    Q_OBJECT

private slots:
    void everyNumberExplainsItself_data()
    {
        QTest::addColumn<QStringList>("plans");
        QTest::addColumn<bool>("ideal");
        const QStringList scenarios = files(QStringLiteral("plans"), QStringLiteral("*.meshplan"))
                                      + files(QStringLiteral("golden"), QStringLiteral("*.meshplan"))
                                      + files(QStringLiteral("derivations"), QStringLiteral("*.meshplan"));
        const QStringList training = files(QStringLiteral("measured-runs/training"), QStringLiteral("*.json"));
        const QStringList serving = files(QStringLiteral("measured-runs/serving"), QStringLiteral("*.json"));
        // The check rows beyond the fixtures: MoE serving on TensorRT-LLM, vLLM and SGLang,
        // gpt-fast's batch-1 decodes, TPU decode.
        const QStringList servingExtra = files(QStringLiteral("measured-runs-extra/serving"), QStringLiteral("*.json"));
        // The folders are read, not listed here: a vanished folder must not pass by testing nothing.
        QVERIFY(scenarios.size() >= 9);
        QVERIFY(training.size() >= 40);
        QVERIFY(serving.size() >= 20);
        QVERIFY(servingExtra.size() >= 40);
        for (const bool ideal : {false, true}) {
            const char *mode = ideal ? "ideal" : "achievable";
            QTest::addRow("scenarios, %s", mode) << scenarios << ideal;
            QTest::addRow("measured training runs, %s", mode) << training << ideal;
            QTest::addRow("measured serving runs, %s", mode) << serving << ideal;
            QTest::addRow("check serving runs, %s", mode) << servingExtra << ideal;
        }
    }

    void everyNumberExplainsItself()
    {
        QFETCH(QStringList, plans);
        QFETCH(bool, ideal);
        std::vector<Problem> problems;
        int paths = 0;
        int checked = 0;
        for (const QString &file : plans)
            checkPlan(file.toStdString(),
                      planFromText(readText(kData + QLatin1Char('/') + file), file.toStdString(), ChipCatalog::builtin(),
                                   ModelCatalog::builtin()),
                      ideal ? CostMode::Ideal : CostMode::Achievable, problems, paths, checked);
        qInfo("%lld plans, %d numbers that must have a derivation, %d derivations checked",
              static_cast<long long>(plans.size()), paths, checked);
        QVERIFY(paths >= 10 * plans.size());
        // Qt Test cuts a failure message at 1024 characters: the whole list goes to the log.
        if (!problems.empty())
            qWarning("%s", report(problems).c_str());
        QVERIFY2(problems.empty(), qPrintable(QStringLiteral("%1 problems, listed above").arg(problems.size())));
    }

    // The built-in scenarios (the book's worked examples the window and `meshplan-cli scenarios`
    // offer) explain themselves as well.
    void builtInScenariosExplainThemselves_data()
    {
        QTest::addColumn<bool>("ideal");
        QTest::newRow("achievable") << false;
        QTest::newRow("ideal") << true;
    }

    void builtInScenariosExplainThemselves()
    {
        QFETCH(bool, ideal);
        std::vector<Problem> problems;
        int paths = 0;
        int checked = 0;
        const auto &scenarios = builtInScenarios();
        QVERIFY(scenarios.size() >= 5);
        for (const Scenario &scenario : scenarios)
            checkPlan("scenario " + scenario.id,
                      planFromJson(scenario.plan, ChipCatalog::builtin(), ModelCatalog::builtin()),
                      ideal ? CostMode::Ideal : CostMode::Achievable, problems, paths, checked);
        qInfo("%zu scenarios, %d numbers that must have a derivation, %d derivations checked", scenarios.size(),
              paths, checked);
        QVERIFY(paths >= 10 * int(scenarios.size()));
        if (!problems.empty())
            qWarning("%s", report(problems).c_str());
        QVERIFY2(problems.empty(), qPrintable(QStringLiteral("%1 problems, listed above").arg(problems.size())));
    }

    // The checks above catch each way a derivation can be wrong (hand-made derivations of a
    // hand-made result), so a pass means something.
    void theCheckCatchesEachProblem()
    {
        const json result = json::parse(R"({"step": {"time_s": 2.0, "tokens": 4096, "compute_s": 1.0, "bubble_s": 2.0,
                                            "optimizer_s": 0.5, "flops": 1e15}, "mfu": 0.5, "tokens_per_s": 3.0,
                                            "collectives": [{"time_s": 0.25}]})");
        const auto make = [](std::string expression, std::vector<DerivationValue> values, double value) {
            Derivation d;
            d.expression = std::move(expression);
            d.values = std::move(values);
            d.value = value;
            d.words = "Words.";
            d.chapter = "5";
            d.section = "Section";
            return d;
        };
        Derivations all;
        all["step.time_s"] = make("a * b", {{"a", 1, "", ""}, {"b", 2, "step.tokens", ""}}, 2.0);
        all["step.tokens"] = make("t", {{"t", 4096.4, "", ""}}, 4096.4); // rounded in the result: fine
        all["collectives[0].time_s"] = make("max(a, b)", {{"a", 0.25, "", ""}, {"b", 0.125, "", ""}}, 0.25);
        std::vector<Problem> problems;
        for (const auto &[path, d] : all)
            checkDerivation(path, d, all, result, "hand", problems);
        QVERIFY2(problems.empty(), report(problems).c_str());

        const std::vector<std::pair<std::string, Derivation>> wrong{
            {"mfu", make("x / y", {{"x", 0.5, "", ""}}, 0.5)},
            {"tokens_per_s", make("x", {{"x", 3, "", ""}, {"z", 1, "", ""}}, 3)},
            {"step.compute_s", make("flops / (", {{"flops", 1, "", ""}}, 1)},
            {"step.bubble_s", make("a", {{"a", 1, "", ""}}, 2)},
            {"step.optimizer_s", make("a", {{"a", 0.25, "", ""}}, 0.25)},
            {"step.flops", make("f", {{"f", 1e15, "step.nothing", ""}}, 1e15)},
            {"terms.ghost_s", make("a", {{"a", 1, "", ""}}, 1)},
        };
        const std::vector<std::string> expected{
            "uses 'y', which is not among its values", "value 'z' is not used", "does not parse",
            "\"a\" gives 1, not its value 2", "value 0.25 is not the result's 0.5",
            "comes from step.nothing, which has no derivation", "the result has no number at this path"};
        for (std::size_t i = 0; i < wrong.size(); ++i) {
            problems.clear();
            checkDerivation(wrong[i].first, wrong[i].second, all, result, "hand", problems);
            QVERIFY2(problems.size() == 1 && problems[0].what.find(expected[i]) != std::string::npos,
                     (wrong[i].first + ": " + report(problems)).c_str());
        }
        Derivation unbooked = make("a", {{"a", 2, "", ""}, {"a", 2, "", ""}}, 2);
        unbooked.chapter = "13";
        unbooked.words.clear();
        unbooked.section.clear();
        problems.clear();
        checkDerivation("step.time_s", unbooked, all, result, "hand", problems);
        QCOMPARE(problems.size(), std::size_t(4)); // listed twice, not a chapter, no words, no section
    }

    // The book rows (tests/data/book-*.json, as tst_bookproblems runs them) that evaluate a whole
    // plan and state a number the contract derives: that number's derivation gives the answer.
    void bookAnswersThroughDerivations()
    {
        std::vector<std::string> failures;
        int checked = 0;
        for (const char *name : {"book-training.json", "book-inference.json", "book-hardware.json"}) {
            for (const auto &row : json::parse(readText(kData + QLatin1Char('/') + QLatin1String(name)))) {
                if (row.at("call") != "evaluate")
                    continue;
                std::vector<std::pair<std::string, double>> wanted;
                for (const auto &[key, value] : row.at("expect").items())
                    if (value.is_number() && contractPath(derivationPath(key)))
                        wanted.emplace_back(derivationPath(key), value.get<double>());
                if (wanted.empty())
                    continue;
                const std::string where = row.at("id").get<std::string>();
                // The book's answers are the ideal model's (tst_bookproblems runs these rows so).
                QVERIFY2(row.value("mode", std::string("ideal")) == "ideal", where.c_str());
                const auto plan = planFromJson(row.at("args").at("plan"), ChipCatalog::builtin(), ModelCatalog::builtin());
                QVERIFY2(plan.hasValue(), where.c_str());
                Derivations derivations;
                const auto e = evaluate(plan.value(), CostMode::Ideal, &derivations);
                QVERIFY2(e.hasValue(), where.c_str());
                for (const auto &[path, want] : wanted) {
                    checkBookAnswer(where, derivations, path, want, row.value("rtol", 0.002), failures);
                    ++checked;
                }
            }
        }
        qInfo("%d book answers checked through their derivations", checked);
        QVERIFY(checked >= 6);
        std::string all;
        for (const auto &f : failures)
            all += "\n  " + f;
        if (!failures.empty())
            qWarning("%s", all.c_str());
        QVERIFY2(failures.empty(), qPrintable(QStringLiteral("%1 failures, listed above").arg(failures.size())));
    }

    // Small plans of the book's worked problems (tests/data/derivations/*.meshplan), each with the
    // book's answer, its tolerance and the sentence it comes from under "_book".
    void bookPlansThroughDerivations_data()
    {
        QTest::addColumn<QString>("file");
        const QStringList plans = files(QStringLiteral("derivations"), QStringLiteral("*.meshplan"));
        QVERIFY(plans.size() >= 3);
        for (const QString &file : plans)
            QTest::newRow(qPrintable(QFileInfo(file).completeBaseName())) << file;
    }

    void bookPlansThroughDerivations()
    {
        QFETCH(QString, file);
        const std::string text = readText(kData + QLatin1Char('/') + file);
        const json book = json::parse(text).at("_book");
        const auto plan = planFromText(text, file.toStdString(), ChipCatalog::builtin(), ModelCatalog::builtin());
        QVERIFY2(plan.hasValue(), plan ? "" : plan.error().toString().c_str());
        Derivations derivations;
        const auto e = evaluate(plan.value(), CostMode::Ideal, &derivations);
        QVERIFY2(e.hasValue(), e ? "" : e.error().toString().c_str());
        const json result = evaluationToJson(e.value(), plan->kind == WorkloadKind::Training);
        std::vector<std::string> failures;
        for (const auto &answer : book.at("answers")) {
            const std::string path = answer.at("path");
            const double want = answer.at("value");
            const double rtol = answer.at("rtol");
            QVERIFY(!answer.at("book").get<std::string>().empty());
            // The result itself, then the derivation.
            const json *inResult = at(result, path);
            QVERIFY2(inResult, path.c_str());
            if (std::fabs(inResult->get<double>() - want) > rtol * std::fabs(want))
                failures.push_back(path + ": the result says " + number(inResult->get<double>()) + ", book "
                                   + number(want));
            checkBookAnswer(file.toStdString(), derivations, path, want, rtol, failures);
        }
        std::string all;
        for (const auto &f : failures)
            all += "\n  " + f;
        QVERIFY2(failures.empty(), all.c_str());
    }
};

QTEST_APPLESS_MAIN(TestDerivations)
#include "tst_derivations.moc"
