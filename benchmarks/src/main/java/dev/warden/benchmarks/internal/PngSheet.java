package dev.warden.benchmarks.internal;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;

import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Charts stacked one above the other under a heading, written as one PNG: one picture per kind
 * (throughput, latency) however many scenarios a run has, each chart keeping its own legend because
 * scenarios have different implementations.
 */
final class PngSheet {

    private static final int MARGIN = 16;
    private static final Font HEADING = new Font(Font.SANS_SERIF, Font.BOLD, 20);

    private PngSheet() {
    }

    /**
     * The heading of a picture: what it shows and, when the file says, when; then the machine and the file
     * it was drawn from, and {@code explanation}.
     */
    static List<String> heading(String what, ResultsFile file, String source, String explanation) {
        String date = file.header().map(RunHeader::date).filter(d -> !d.isEmpty())
                .map(d -> ", run of " + d.replace('T', ' ').replace("Z", " UTC")).orElse("");
        String machine = file.header().map(RunHeader::machine).filter(m -> !m.isEmpty())
                .orElse("machine not recorded");
        return List.of("Warden benchmarks: " + what + date, machine + "; drawn from " + source, explanation);
    }

    /**
     * Writes {@code charts}, each {@code width} × {@code chartHeight} pixels, under the lines of
     * {@code heading} (the first in bold).
     */
    static void write(List<String> heading, List<JFreeChart> charts, int width, int chartHeight, Path file)
            throws IOException {
        List<String> subheading = heading.subList(1, heading.size());
        int headingHeight = MARGIN + 26 + 18 * subheading.size() + MARGIN / 2;
        int height = headingHeight + charts.size() * chartHeight + MARGIN;
        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            g.setColor(Color.BLACK);
            g.setFont(HEADING);
            int y = MARGIN + 20;
            g.drawString(heading.get(0), MARGIN, y);
            g.setFont(ChartLook.LABEL);
            g.setColor(Color.DARK_GRAY);
            for (String line : subheading) {
                y += 18;
                g.drawString(line, MARGIN, y);
            }
            for (int i = 0; i < charts.size(); i++) {
                charts.get(i).draw(g, new Rectangle2D.Double(0, headingHeight + i * chartHeight, width, chartHeight));
            }
        } finally {
            g.dispose();
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            ChartUtils.writeBufferedImageAsPNG(out, image);
        }
    }
}
