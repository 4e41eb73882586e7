package dev.cdcjoin.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Line2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;

/**
 * Renders the report's chart (the SVG subset {@link Report} writes: rect, line, text) to a PNG with
 * Java2D, so the chart also exists where SVG is not shown.
 */
final class SvgToPng {

    private SvgToPng() {}

    private static final Pattern ELEMENT =
            Pattern.compile("<(rect|line|text)\\b([^>]*)>(?:([^<]*)</text>)?");
    private static final Pattern ATTR = Pattern.compile("([\\w-]+)=\"([^\"]*)\"");

    static void render(Path svg, Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        String s = Files.readString(svg);
        Matcher size = Pattern.compile("<svg[^>]*width=\"(\\d+)\" height=\"(\\d+)\"").matcher(s);
        if (!size.find()) {
            throw new IOException("not a chart: " + svg);
        }
        int scale = 2;
        int w = Integer.parseInt(size.group(1));
        int h = Integer.parseInt(size.group(2));
        BufferedImage img = new BufferedImage(w * scale, h * scale, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(
                RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.scale(scale, scale);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        Matcher m = ELEMENT.matcher(s);
        while (m.find()) {
            java.util.Map<String, String> a = new java.util.HashMap<>();
            Matcher am = ATTR.matcher(m.group(2));
            while (am.find()) {
                a.put(am.group(1), am.group(2));
            }
            switch (m.group(1)) {
                case "rect":
                    if ("100%".equals(a.get("width"))) {
                        continue;
                    }
                    g.setColor(color(a.getOrDefault("fill", "#000")));
                    g.fill(
                            new Rectangle2D.Double(
                                    d(a, "x"), d(a, "y"), d(a, "width"), d(a, "height")));
                    break;
                case "line":
                    g.setColor(color(a.getOrDefault("stroke", "#000")));
                    g.setStroke(new BasicStroke(1f));
                    g.draw(new Line2D.Double(d(a, "x1"), d(a, "y1"), d(a, "x2"), d(a, "y2")));
                    break;
                default:
                    String text = unescape(m.group(3) == null ? "" : m.group(3));
                    float fs =
                            a.containsKey("font-size") ? Float.parseFloat(a.get("font-size")) : 11f;
                    g.setFont(
                            new Font(
                                    Font.SANS_SERIF,
                                    "bold".equals(a.get("font-weight")) ? Font.BOLD : Font.PLAIN,
                                    Math.round(fs)));
                    g.setColor(Color.BLACK);
                    FontMetrics fm = g.getFontMetrics();
                    double x = d(a, "x");
                    String anchor = a.getOrDefault("text-anchor", "start");
                    if (anchor.equals("middle")) {
                        x -= fm.stringWidth(text) / 2.0;
                    } else if (anchor.equals("end")) {
                        x -= fm.stringWidth(text);
                    }
                    g.drawString(text, (float) x, (float) d(a, "y"));
            }
        }
        g.dispose();
        ImageIO.write(img, "png", png.toFile());
    }

    private static double d(java.util.Map<String, String> a, String k) {
        return Double.parseDouble(a.getOrDefault(k, "0"));
    }

    private static Color color(String c) {
        if (c.startsWith("#") && c.length() == 4) {
            c =
                    "#"
                            + c.charAt(1)
                            + c.charAt(1)
                            + c.charAt(2)
                            + c.charAt(2)
                            + c.charAt(3)
                            + c.charAt(3);
        }
        return c.startsWith("#") ? Color.decode(c) : Color.BLACK;
    }

    private static String unescape(String s) {
        return s.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    }
}
