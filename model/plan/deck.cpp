#include "plan/deck.h"

#include "base/jsonfields.h"
#include "plan/plantitle.h"

namespace meshplan::model {

namespace jf = json_fields;

namespace {

const char *const kChartNames[] = {"mesh", "roofline", "memory", "timeline", "sweep", "sweep-chips"};

bool knownChart(const std::string &name)
{
    for (const char *c : kChartNames)
        if (name == c)
            return true;
    return false;
}

std::string text(const nlohmann::json &object, const char *key)
{
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

} // namespace

Expected<Deck> deckFromText(const std::string &text_, const std::string &label, const PlanTextReader &readPlan,
                            const ChipCatalog &chips, const ModelCatalog &models)
{
    const nlohmann::json doc = nlohmann::json::parse(text_, nullptr, false);
    if (doc.is_discarded())
        return Error{"", label + ": is not valid JSON"};
    if (!doc.is_object())
        return Error{"", label + ": a deck is a JSON object"};
    if (text(doc, "format") != "meshplan/deck")
        return Error{"format", label + ": not a Meshplan deck (\"format\" must be \"meshplan/deck\")"};
    const auto version = doc.find("version");
    if (version == doc.end() || !version->is_number_integer() || version->get<int>() < 1)
        return Error{"version", label + ": \"version\" must be a positive integer"};
    if (version->get<int>() > kDeckVersion)
        return Error{"version", label + ": deck version " + std::to_string(version->get<int>())
                                    + "; this Meshplan reads versions up to " + std::to_string(kDeckVersion)};
    const auto slides = doc.find("slides");
    if (slides == doc.end() || !slides->is_array())
        return Error{"slides", label + ": \"slides\" must be an array"};
    Deck deck;
    deck.title = text(doc, "title");
    for (std::size_t i = 0; i < slides->size(); ++i) {
        const nlohmann::json &s = (*slides)[i];
        const std::string path = "slides[" + std::to_string(i) + "]";
        DeckSlide slide;
        if (!s.is_object()) {
            slide.problem = path + ": a slide is an object with a plan, a title and notes";
            deck.slides.push_back(std::move(slide));
            continue;
        }
        slide.title = text(s, "title");
        slide.notes = text(s, "notes");
        if (const auto charts = s.find("charts"); charts != s.end() && charts->is_array())
            for (const auto &c : *charts)
                if (c.is_string() && knownChart(c.get<std::string>()) && slide.charts.size() < 2)
                    slide.charts.push_back(c.get<std::string>());
        const auto plan = s.find("plan");
        if (plan == s.end()) {
            slide.problem = path + ".plan: missing";
        } else if (plan->is_string()) {
            slide.planPath = plan->get<std::string>();
            const auto planText = readPlan(slide.planPath);
            if (!planText) {
                slide.problem = slide.planPath + ": " + planText.error().message;
            } else {
                auto parsed = planFromText(*planText, slide.planPath, chips, models);
                if (parsed)
                    slide.plan = std::move(parsed.value());
                else
                    slide.problem = slide.planPath + ": " + parsed.error().toString();
            }
        } else if (plan->is_object()) {
            slide.inlinePlan = *plan;
            auto parsed = planFromJson(*plan, chips, models);
            if (parsed)
                slide.plan = std::move(parsed.value());
            else
                slide.problem = path + ".plan." + parsed.error().toString();
        } else {
            slide.problem = path + ".plan: a relative path or a plan object, got " + jf::describe(*plan);
        }
        if (slide.title.empty() && slide.plan)
            slide.title = slide.plan->title.empty() ? generatedTitle(*slide.plan) : slide.plan->title;
        deck.slides.push_back(std::move(slide));
    }
    return deck;
}

nlohmann::json deckToJson(const Deck &deck)
{
    nlohmann::json slides = nlohmann::json::array();
    for (const DeckSlide &s : deck.slides) {
        nlohmann::json slide = {{"title", s.title}, {"notes", s.notes}};
        if (!s.planPath.empty())
            slide["plan"] = s.planPath;
        else if (!s.inlinePlan.is_null())
            slide["plan"] = s.inlinePlan;
        else if (s.plan)
            slide["plan"] = planToJson(*s.plan);
        if (!s.charts.empty())
            slide["charts"] = s.charts;
        slides.push_back(std::move(slide));
    }
    return {{"format", "meshplan/deck"}, {"version", kDeckVersion}, {"title", deck.title}, {"slides", slides}};
}

DeckSlide slideFromPlan(const Plan &plan, const std::string &title)
{
    DeckSlide slide;
    slide.title = title.empty() ? (plan.title.empty() ? generatedTitle(plan) : plan.title) : title;
    slide.inlinePlan = planToJson(plan);
    slide.plan = plan;
    return slide;
}

} // namespace meshplan::model
