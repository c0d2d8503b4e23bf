package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Result;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.LegendItem;
import org.jfree.chart.LegendItemCollection;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.DefaultDrawingSupplier;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.CombinedRangeCategoryPlot;
import org.jfree.chart.renderer.category.LineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Shape;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * Latency percentiles of the contended rows, a chart per scenario: a panel per thread count side by
 * side on one logarithmic latency axis (so panels compare), a line per implementation. The tail is where
 * lock implementations differ: one that hands the lock to whoever asks first has a low median and a
 * long p99.
 */
public final class LatencyChart {

    private static final int WIDTH = 1400;
    private static final int HEIGHT = 460;

    /** A percentile the results carry: its name on the axis, and how to read it from a row. */
    record Percentile(String name, ToDoubleFunction<Result> micros) {
    }

    /** What {@code results.jsonl} carries, in order; max is the 100th percentile of a run. */
    static final List<Percentile> PERCENTILES = List.of(
            new Percentile("p50", Result::latencyP50Micros),
            new Percentile("p99", Result::latencyP99Micros),
            new Percentile("p99.9", Result::latencyP999Micros),
            new Percentile("max", Result::latencyMaxMicros));

    private LatencyChart() {
    }

    /**
     * Writes the picture of {@code file} (named {@code source} in its heading) to {@code png}, if it has
     * contended rows.
     *
     * @return whether there was something to draw
     * @throws IOException when the picture cannot be written
     */
    public static boolean write(ResultsFile file, String source, Path png) throws IOException {
        List<JFreeChart> charts = perContendedScenario(file.results());
        if (charts.isEmpty()) {
            return false;
        }
        PngSheet.write(PngSheet.heading("latency under contention (lower is better)", file, source,
                        "Per operation, from the median to the slowest, ms on a log scale: a line per implementation,"
                                + " a panel per thread count. Blue and green are Warden, warm colours the alternatives."),
                charts, WIDTH, HEIGHT, png);
        return true;
    }

    /** A chart per scenario with contended groups in {@code results}; none when there are no such groups. */
    static List<JFreeChart> perContendedScenario(List<Result> results) {
        Map<String, List<ScenarioGroup>> byScenario = new LinkedHashMap<>();
        for (ScenarioGroup group : ScenarioGroup.of(results)) {
            if (group.contended()) {
                byScenario.computeIfAbsent(group.scenario(), k -> new ArrayList<>()).add(group);
            }
        }
        List<JFreeChart> charts = new ArrayList<>();
        byScenario.forEach((scenario, groups) -> charts.add(chart(scenario, groups, results)));
        return charts;
    }

    private static JFreeChart chart(String scenario, List<ScenarioGroup> groups, List<Result> results) {
        LogAxis y = new LogAxis("latency, ms (log scale)");
        ChartLook.axis(y);
        y.setSmallestValue(0.001);
        DecimalFormat millis = new DecimalFormat("#,##0.###");
        y.setNumberFormatOverride(millis);
        // A tick per decade (0.1, 1, 10, 100 ms), minor ones at 2, 3 ... 9 times it: numbers a reader can place.
        y.setTickUnit(new NumberTickUnit(1, millis, 10));
        y.setMinorTickMarksVisible(true);
        CombinedRangeCategoryPlot panels = new CombinedRangeCategoryPlot(y);
        panels.setGap(16);
        // Colours as in the throughput picture: by the scenario's rows at every thread count.
        Map<String, Color> colours = Palette.of(results.stream().filter(r -> r.scenario().equals(scenario)).toList());
        // Shapes too, set per implementation: left to each panel, an implementation's shape would change between panels.
        List<String> implementations = new ArrayList<>(colours.keySet());
        Shape[] shapes = DefaultDrawingSupplier.createStandardSeriesShapes();
        LegendItemCollection legend = new LegendItemCollection();
        Set<String> inLegend = new HashSet<>();
        double low = Double.MAX_VALUE;
        double high = Double.MIN_VALUE;
        for (ScenarioGroup group : groups) {
            DefaultCategoryDataset data = new DefaultCategoryDataset();
            for (Result r : group.rows()) {
                for (Percentile p : PERCENTILES) {
                    double micros = p.micros().applyAsDouble(r);
                    // A log axis has no place for 0, and NaN is a figure not measured: both left out.
                    boolean drawn = !Double.isNaN(micros) && micros > 0;
                    data.addValue(drawn ? micros / 1000 : null, r.implementation(), p.name());
                    if (drawn) {
                        low = Math.min(low, micros / 1000);
                        high = Math.max(high, micros / 1000);
                    }
                }
            }
            CategoryAxis x = new CategoryAxis("percentile, " + group.threadsLabel());
            ChartLook.axis(x);
            x.setLowerMargin(0.04);
            x.setUpperMargin(0.04);
            LineAndShapeRenderer lines = new LineAndShapeRenderer(true, true);
            for (int s = 0; s < data.getRowCount(); s++) {
                String implementation = (String) data.getRowKey(s);
                lines.setSeriesPaint(s, colours.get(implementation));
                lines.setSeriesShape(s, shapes[implementations.indexOf(implementation) % shapes.length]);
                lines.setSeriesStroke(s, new BasicStroke(2f));
            }
            CategoryPlot panel = new CategoryPlot(data, x, null, lines);
            ChartLook.plot(panel);
            panel.setDomainGridlinesVisible(true);
            panel.setDomainGridlinePaint(ChartLook.GRID);
            panel.setRangeMinorGridlinesVisible(true);
            panel.setRangeMinorGridlinePaint(ChartLook.MINOR_GRID);
            panels.add(panel);
            LegendItemCollection items = panel.getLegendItems();
            for (int i = 0; i < items.getItemCount(); i++) {
                LegendItem item = items.get(i);
                if (inLegend.add(item.getLabel())) {
                    legend.add(item);
                }
            }
        }
        // Whole decades at both ends, so the lowest and highest lines sit between labelled ticks.
        if (low <= high) {
            // (a hair beyond them: the axis labels no tick that sits exactly on its ends)
            y.setRange(0.95 * Math.pow(10, Math.floor(Math.log10(low))), 1.05 * Math.pow(10, Math.ceil(Math.log10(high))));
        }
        // The panels' own legends would name every implementation once per panel.
        panels.setFixedLegendItems(legend);
        ChartLook.plot(panels);
        return ChartLook.chart(scenario + ": latency", panels);
    }
}
