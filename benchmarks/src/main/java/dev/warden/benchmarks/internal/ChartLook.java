package dev.warden.benchmarks.internal;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.Axis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;

import java.awt.Color;
import java.awt.Font;
import java.text.NumberFormat;
import java.util.Locale;

/** The look every picture shares: fonts, a white plot with light grid lines, the legend on the right. */
final class ChartLook {

    static final Font TITLE = new Font(Font.SANS_SERIF, Font.BOLD, 16);
    static final Font LABEL = new Font(Font.SANS_SERIF, Font.PLAIN, 13);
    static final Font TICK = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
    static final Font SMALL = new Font(Font.SANS_SERIF, Font.PLAIN, 11);
    static final Color GRID = new Color(0xd4d4d4);
    static final Color MINOR_GRID = new Color(0xebebeb);

    private ChartLook() {
    }

    /** A chart of {@code plot} titled {@code title}, legend to the right (names are long, bars many). */
    static JFreeChart chart(String title, CategoryPlot plot) {
        JFreeChart chart = new JFreeChart(title, TITLE, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        chart.setPadding(new RectangleInsets(6, 6, 10, 6));
        LegendTitle legend = chart.getLegend();
        legend.setPosition(RectangleEdge.RIGHT);
        legend.setItemFont(LABEL);
        legend.setFrame(org.jfree.chart.block.BlockBorder.NONE);
        legend.setMargin(new RectangleInsets(0, 12, 0, 0));
        return chart;
    }

    static void plot(CategoryPlot plot) {
        plot.setBackgroundPaint(Color.WHITE);
        plot.setOutlineVisible(false);
        plot.setRangeGridlinePaint(GRID);
        plot.setRangeGridlinesVisible(true);
        plot.setDomainGridlinesVisible(false);
    }

    static void axis(Axis axis) {
        axis.setLabelFont(LABEL);
        axis.setTickLabelFont(TICK);
    }

    /** E.g. {@code 950}, {@code 12.5K}, {@code 204K}: the digits a reader compares, none that are noise. */
    static NumberFormat compact() {
        NumberFormat format = NumberFormat.getCompactNumberInstance(Locale.ROOT, NumberFormat.Style.SHORT);
        format.setMaximumFractionDigits(1);
        return format;
    }
}
