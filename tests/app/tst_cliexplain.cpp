// meshplan-cli evaluate --explain: the readable derivations (formula, values, result, words,
// sources) of hand-made derivations, and the --json document of real plans.
#include "cli.h"
#include "clirunner.h"

#include "base/derivation.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

using meshplan::testing::cli;
using meshplan::testing::CliRun;
using nlohmann::json;
namespace m = meshplan::model;

namespace {

std::string explained(const m::Derivations &derivations, const json &result = json::object())
{
    std::ostringstream out;
    meshplan::app::printDerivations(derivations, result, out);
    return out.str();
}

m::Derivation derivation(const std::string &expression, std::vector<m::DerivationValue> values, double value)
{
    m::Derivation d;
    d.expression = expression;
    d.values = std::move(values);
    d.value = value;
    d.words = "One microbatch after another through the stage.";
    d.chapter = "5";
    d.section = "Pipelining";
    return d;
}

/// Terminal columns of a UTF-8 line.
int columns(const std::string &line)
{
    int n = 0;
    for (const char c : line)
        n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

std::vector<std::string> lines(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

const std::string kPlan = std::string(MESHPLAN_TEST_DATA) + "/plans/llama-3-70b-v5p-16x16x32.meshplan";
const std::string kServing = std::string(MESHPLAN_TEST_DATA) + "/plans/llama-3-70b-int8-v5e-serving.meshplan";

} // namespace

class TestCliExplain : public QObject
{
    Q_OBJECT

private slots:
    // The issue's example block: the formula with names, with the plan's values, the result in
    // the header with the book's chapter and section, the words, and where values come from.
    void oneBlockReadsAsTheIssueShows()
    {
        m::Derivations d;
        d["step.compute_s"] = derivation("microbatches * t_microbatch",
                                         {{"microbatches", 8, "", "plan: parallelism.microbatches"},
                                          {"t_microbatch", 1.54e-3, "terms.stage_microbatch_s", ""}},
                                         8 * 1.54e-3);
        const std::string want = "\nHow each number comes to be (1 derivations):\n"
                                 "\n"
                                 "step.compute_s = 12.3 ms   [ch. 5 How to Parallelize a Transformer for Training"
                                 " — Pipelining]\n"
                                 "  microbatches × t_microbatch\n"
                                 "  = 8 × 1.54 ms\n"
                                 "  One microbatch after another through the stage.\n"
                                 "  microbatches: plan: parallelism.microbatches;  t_microbatch ← terms.stage_microbatch_s\n";
        QCOMPARE(QString::fromStdString(explained(d)), QString::fromStdString(want));
    }

    // Units follow the names: FLOPs, FLOP/s, seconds, bytes; other numbers get four digits.
    // Parentheses stay where the order needs them, and only there.
    void valuesAreFormattedByWhatTheyAre()
    {
        m::Derivations d;
        // 1.2e18 / (4.59e14 * 0.72) = 3631.2 s = 1.01 h.
        d["step.time_s"] = derivation("flops / (peak_flops * efficiency)",
                                      {{"flops", 1.2e18, "step.flops", ""},
                                       {"peak_flops", 4.59e14, "", "catalog: TPU v5p"},
                                       {"efficiency", 0.72, "", "benchmark: MaxText"}},
                                      1.2e18 / (4.59e14 * 0.72));
        d["memory_per_chip.total"] = derivation("(params_bytes + kv) / chips - 1",
                                                {{"params_bytes", 140e9, "", ""}, {"kv", 2e9, "", ""}, {"chips", 8, "", ""}},
                                                142e9 / 8 - 1);
        d["terms.x"] = derivation("-a ** 2 + (b - c) * -d", {{"a", 3, "", ""}, {"b", 5, "", ""}, {"c", 2, "", ""},
                                                            {"d", -2, "", ""}},
                                  -9 + 3 * 2);
        const std::string text = explained(d);
        QVERIFY2(text.find("step.time_s = 1.01 h   [ch. 5") != std::string::npos, text.c_str());
        QVERIFY2(text.find("  flops / (peak_flops × efficiency)\n  = 1.20 EFLOP / (459 TFLOP/s × 0.72)\n")
                     != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find("flops ← step.flops;  peak_flops: catalog: TPU v5p;  efficiency: benchmark: MaxText")
                     != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find("memory_per_chip.total = 17.7 GB") != std::string::npos, text.c_str());
        // A factor is a plain number even when its name speaks of FLOPs or bytes; a time is a time
        // even when its name speaks of bandwidth.
        m::Derivations factors;
        factors["terms.t_s"] = derivation("bandwidth_s * flops_fraction + hbm_bytes_efficiency",
                                          {{"bandwidth_s", 2e-3, "", ""}, {"flops_fraction", 0.5, "", ""},
                                           {"hbm_bytes_efficiency", 0.25, "", ""}},
                                          0.251);
        const std::string factorText = explained(factors);
        QVERIFY2(factorText.find("  = 2.00 ms × 0.5 + 0.25\n") != std::string::npos, factorText.c_str());
        QVERIFY2(text.find("  (params_bytes + kv) / chips − 1\n  = (140 GB + 2e+09) / 8 − 1\n") != std::string::npos,
                 text.c_str());
        // Python's reading: -(a**2) + (b - c) * (-d); a negative value is parenthesized.
        QVERIFY2(text.find("  −a^2 + (b − c) × −d\n  = −3^2 + (5 − 2) × −(−2)\n") != std::string::npos, text.c_str());
        QVERIFY2(text.find("!") == std::string::npos, text.c_str());
    }

    // The result reads model, memory, step, MFU, tokens/s, inference, collectives (by index),
    // then the intermediate terms; the explanation follows it.
    void blocksFollowTheResult()
    {
        m::Derivations d;
        for (const char *path : {"terms.a_s", "collectives[10].time_s", "collectives[2].exposed_s", "collectives[2].time_s",
                                 "tokens_per_s", "mfu", "memory_per_chip.total", "memory_per_chip.params", "step.time_s",
                                 "step.compute_s", "inference.decode_step_s", "model.params"})
            d[path] = derivation("x", {{"x", 1, "", ""}}, 1);
        json result;
        result["collectives"] = json::array();
        for (int i = 0; i < 11; ++i)
            result["collectives"].push_back({{"op", "all-gather"}, {"purpose", "fsdp weights"}});
        const std::string text = explained(d, result);
        std::vector<std::string> heads;
        for (const auto &line : lines(text))
            if (!line.empty() && line[0] != ' ' && line.find(" = ") != std::string::npos)
                heads.push_back(line.substr(0, line.find(" = ")));
        const std::vector<std::string> want{"model.params", "memory_per_chip.params", "memory_per_chip.total",
                                            "step.time_s", "step.compute_s", "mfu", "tokens_per_s",
                                            "inference.decode_step_s",
                                            "collectives[2].time_s (all-gather, fsdp weights)",
                                            "collectives[2].exposed_s (all-gather, fsdp weights)",
                                            "collectives[10].time_s (all-gather, fsdp weights)", "terms.a_s"};
        QCOMPARE(heads, want);
    }

    // A formula that does not parse, a name without a value, a formula that does not give its
    // value: each is printed with what is wrong, never a crash.
    void brokenDerivationsSayWhy()
    {
        m::Derivations d;
        d["step.time_s"] = derivation("flops / (", {{"flops", 1, "", ""}}, 1);
        d["step.compute_s"] = derivation("a * b", {{"a", 2, "", ""}}, 6);
        d["step.bubble_s"] = derivation("a + 1", {{"a", 2, "", ""}}, 4);
        d["step.optimizer_s"] = derivation("exp(a)", {{"a", 2, "", ""}}, 4);
        const std::string text = explained(d);
        QVERIFY2(text.find("  flops / (\n  ! the formula does not parse: the formula ends early at character 10") != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find("  = 2 × b?\n  ! no value named 'b'") != std::string::npos, text.c_str());
        QVERIFY2(text.find("  ! the formula gives 3, not 4") != std::string::npos, text.c_str());
        QVERIFY2(text.find("! the formula does not parse: unknown function 'exp'") != std::string::npos, text.c_str());
    }

    // Long words, a long formula and a long section break into lines of at most 100 columns,
    // words whole.
    void linesFitA100ColumnTerminal()
    {
        m::Derivations d;
        std::string sum;
        std::vector<m::DerivationValue> values;
        for (int i = 0; i < 30; ++i) {
            const std::string name = "collective_time_" + std::to_string(i) + "_s";
            sum += (i ? " + " : "") + name;
            values.push_back({name, 1e-3 * (i + 1), "collectives[" + std::to_string(i) + "].time_s", ""});
        }
        m::Derivation long_ = derivation(sum, values, 1e-3 * 465);
        long_.section = "Combining data, tensor, pipeline and expert parallelism: when each axis is communication-bound";
        std::string words;
        for (int i = 0; i < 40; ++i)
            words += "Every collective of the step adds its time here, hidden or not. ";
        long_.words = words;
        d["step.communication_s"] = long_;
        const std::string text = explained(d);
        int longest = 0;
        for (const auto &line : lines(text))
            longest = std::max(longest, columns(line));
        QVERIFY2(longest <= 100, text.c_str());
        QVERIFY2(lines(text).size() > 20, text.c_str());
        QVERIFY2(text.find("collective_time_29_s ← collectives[29].time_s") != std::string::npos, text.c_str());
        QVERIFY2(text.find("465 ms") != std::string::npos, text.c_str());
    }

    void onlyEvaluateTakesExplain()
    {
        QCOMPARE(cli({"search", kPlan, "--explain"}).code, 2);
        QCOMPARE(cli({"compare", kPlan, kPlan, "--explain"}).code, 2);
        QVERIFY(cli({"--help"}).out.find("--explain") != std::string::npos);
    }

    // --json: the result of plain --json, plus "derivations" (and the "terms" they name), each at
    // the number's path; --ideal explains the ideal result.
    void jsonAddsDerivationsToTheResult_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<bool>("ideal");
        QTest::newRow("training") << QString::fromStdString(kPlan) << false;
        QTest::newRow("training, ideal") << QString::fromStdString(kPlan) << true;
        QTest::newRow("serving") << QString::fromStdString(kServing) << false;
        QTest::newRow("serving, ideal") << QString::fromStdString(kServing) << true;
    }

    void jsonAddsDerivationsToTheResult()
    {
        QFETCH(QString, plan);
        QFETCH(bool, ideal);
        std::vector<std::string> args{"evaluate", plan.toStdString(), "--json"};
        if (ideal)
            args.push_back("--ideal");
        const CliRun plain = cli(args);
        QVERIFY2(plain.code == 0, plain.err.c_str());
        args.push_back("--explain");
        const CliRun explainedRun = cli(args);
        QVERIFY2(explainedRun.code == 0, explainedRun.err.c_str());
        json result = json::parse(explainedRun.out);
        QVERIFY(result.contains("derivations") && result["derivations"].is_object());
        const json derivations = result["derivations"];
        result.erase("derivations");
        result.erase("terms");
        QCOMPARE(QString::fromStdString(result.dump()), QString::fromStdString(json::parse(plain.out).dump()));

        const bool training = result.contains("step");
        const std::vector<std::pair<std::string, double>> headline =
            training ? std::vector<std::pair<std::string, double>>{{"step.time_s", result["step"]["time_s"].get<double>()},
                                                                   {"mfu", result["mfu"].get<double>()},
                                                                   {"tokens_per_s", result["tokens_per_s"].get<double>()}}
                     : std::vector<std::pair<std::string, double>>{
                           {"inference.decode_step_s", result["inference"]["decode_step_s"].get<double>()},
                           {"inference.time_to_first_token_s", result["inference"]["time_to_first_token_s"].get<double>()}};
        for (const auto &[path, number] : headline) {
            QVERIFY2(derivations.contains(path), ("no derivation at " + path).c_str());
            const json &d = derivations[path];
            for (const char *key : {"expression", "values", "from", "sources", "value", "words", "chapter", "section", "url"})
                QVERIFY2(d.contains(key), (path + " lacks " + key).c_str());
            QVERIFY2(std::fabs(d["value"].get<double>() - number) <= 1e-9 * std::fabs(number),
                     (path + ": " + d.dump()).c_str());
            QVERIFY2(d["url"].get<std::string>().rfind("https://jax-ml.github.io/scaling-book/", 0) == 0, d.dump().c_str());
            for (const auto &[name, from] : d["from"].items())
                QVERIFY2(derivations.contains(from.get<std::string>()), (path + ": " + name + " from " + from.dump()).c_str());
        }
    }

    // The readable form explains the numbers the summary prints, under it.
    void readableExplainsTheSummary()
    {
        const CliRun r = cli({"evaluate", kPlan, "--explain"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const CliRun summary = cli({"evaluate", kPlan});
        QCOMPARE(QString::fromStdString(r.out.substr(0, summary.out.size())), QString::fromStdString(summary.out));
        for (const char *head : {"\nstep.time_s = ", "\nstep.compute_s = ", "\nmfu = ", "\ntokens_per_s = ",
                                 "\nmemory_per_chip.total = ", "\ncollectives[0].time_s ("})
            QVERIFY2(r.out.find(head) != std::string::npos, (std::string("no ") + head + " in\n" + r.out).c_str());
        QVERIFY2(r.out.find("\n  ! ") == std::string::npos, r.out.c_str());
        for (const auto &line : lines(r.out.substr(summary.out.size())))
            QVERIFY2(columns(line) <= 100, line.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCliExplain)
#include "tst_cliexplain.moc"
