package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Result;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Throughput as grouped bars, a chart per scenario: a group of bars per thread count, a bar per
 * implementation, and under each group how Warden's best compares with the best alternative.
 */
public final class ThroughputChart {

    private static final int WIDTH = 1400;
    private static final int HEIGHT = 400;

    private ThroughputChart() {
    }

    /**
     * Writes the picture of {@code file} (named {@code source} in its heading) to {@code png}.
     *
     * @throws IOException when the picture cannot be written
     */
    public static void write(ResultsFile file, String source, Path png) throws IOException {
        PngSheet.write(PngSheet.heading("throughput (higher is better)", file, source,
                        "Operations/s per implementation: blue and green are Warden, warm colours the alternatives,"
                                + " grey the server's own limit. Under each group: Warden's best over the best alternative."),
                perScenario(file.results()), WIDTH, HEIGHT, png);
    }

    /** A chart per scenario of {@code results}, in order of first appearance. */
    static List<JFreeChart> perScenario(List<Result> results) {
        Map<String, List<ScenarioGroup>> byScenario = new LinkedHashMap<>();
        for (ScenarioGroup group : ScenarioGroup.of(results)) {
            byScenario.computeIfAbsent(group.scenario(), k -> new ArrayList<>()).add(group);
        }
        List<JFreeChart> charts = new ArrayList<>();
        byScenario.forEach((scenario, groups) -> charts.add(chart(scenario, groups)));
        return charts;
    }

    /** Under the group's bars: the thread count, and Warden's best over the best peer where both ran. */
    static String categoryLabel(ScenarioGroup group) {
        return group.threadsLabel() + group.ratioText().map(ratio -> "\nWarden " + ratio).orElse("");
    }

    private static JFreeChart chart(String scenario, List<ScenarioGroup> groups) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        List<Result> rows = new ArrayList<>();
        groups.forEach(g -> rows.addAll(g.rows()));
        // Series are added in order of first appearance, so the legend reads in the table's order.
        for (Result r : rows) {
            data.addValue(null, r.implementation(), categoryLabel(groups.get(0)));
        }
        for (ScenarioGroup group : groups) {
            for (Result r : group.rows()) {
                data.addValue(r.throughput(), r.implementation(), categoryLabel(group));
            }
        }
        CategoryAxis x = new CategoryAxis(null);
        ChartLook.axis(x);
        x.setMaximumCategoryLabelLines(2);
        x.setCategoryMargin(0.25);
        NumberAxis y = new NumberAxis("throughput, operations/s");
        ChartLook.axis(y);
        y.setNumberFormatOverride(ChartLook.compact());
        y.setUpperMargin(0.15); // room for the value over the tallest bar
        BarRenderer bars = new BarRenderer();
        bars.setBarPainter(new StandardBarPainter());
        bars.setShadowVisible(false);
        bars.setItemMargin(0.04);
        bars.setMaximumBarWidth(0.07); // a scenario with two rows would otherwise get bars a third of the chart wide
        bars.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}", ChartLook.compact()));
        bars.setDefaultItemLabelsVisible(true);
        bars.setDefaultItemLabelFont(ChartLook.SMALL);
        bars.setDefaultItemLabelPaint(Color.DARK_GRAY);
        // Upright text over narrow bars would overlap its neighbours: turned a quarter, it reads upwards.
        bars.setDefaultPositiveItemLabelPosition(new ItemLabelPosition(ItemLabelAnchor.OUTSIDE12,
                TextAnchor.CENTER_LEFT, TextAnchor.CENTER_LEFT, -Math.PI / 2));
        bars.setItemLabelAnchorOffset(3);
        Map<String, Color> colours = Palette.of(rows);
        for (int s = 0; s < data.getRowCount(); s++) {
            bars.setSeriesPaint(s, colours.get((String) data.getRowKey(s)));
        }
        CategoryPlot plot = new CategoryPlot(data, x, y, bars);
        ChartLook.plot(plot);
        return ChartLook.chart(scenario, plot);
    }
}
