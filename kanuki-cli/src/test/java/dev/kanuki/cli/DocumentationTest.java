package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * Keeps the project's Markdown honest: every relative link (and its {@code #anchor}) in every
 * {@code *.md} of the repository resolves, and the README's first {@code xml} block is the
 * fragment a user pastes into a pom.xml (the release check builds a consumer project from it).
 * Reads the files of the clone this module was built from.
 */
class DocumentationTest {
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern XML_BLOCK = Pattern.compile("```xml\\n(.*?)```", Pattern.DOTALL);

    private final Path root = Path.of("").toAbsolutePath().getParent();

    @Test
    void everyRelativeLinkInTheMarkdownResolves() throws IOException {
        List<Path> pages = markdownPages();
        assertTrue(pages.contains(root.resolve("README.md")), "README.md not found under " + root);
        Map<Path, Set<String>> anchors = new HashMap<>();
        List<String> broken = new ArrayList<>();
        for (Path page : pages) {
            Matcher m = LINK.matcher(outsideCodeBlocks(Files.readString(page, StandardCharsets.UTF_8)));
            while (m.find()) {
                String link = m.group(1);
                if (link.matches("[a-zA-Z][a-zA-Z+.-]*:.*")) {
                    continue; // https:, mailto: ...
                }
                int hash = link.indexOf('#');
                String file = hash < 0 ? link : link.substring(0, hash);
                Path target = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                String where = root.relativize(page) + ": (" + link + ")";
                if (!Files.exists(target)) {
                    broken.add(where + " names no file");
                } else if (hash >= 0 && target.toString().endsWith(".md")
                        && !anchors.computeIfAbsent(target, DocumentationTest::anchorsOf).contains(link.substring(hash + 1))) {
                    broken.add(where + " names no heading of " + root.relativize(target));
                }
            }
        }
        assertEquals(List.of(), broken, "broken links");
    }

    @Test
    void theReadmesFirstXmlBlockIsThePomFragmentAUserPastes() throws Exception {
        String readme = Files.readString(root.resolve("README.md"), StandardCharsets.UTF_8);
        Matcher block = XML_BLOCK.matcher(readme);
        assertTrue(block.find(), "README.md has no ```xml block");
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        Document pom = factory.newDocumentBuilder()
                .parse(new InputSource(new StringReader("<project>" + block.group(1) + "</project>")));

        List<Element> managed = dependencies(pom, "dependencyManagement");
        assertEquals(1, managed.size(), "dependencyManagement should import the BOM only");
        Element bom = managed.get(0);
        assertEquals("dev.kanuki:kanuki-bom", coordinates(bom));
        assertEquals("pom", text(bom, "type"));
        assertEquals("import", text(bom, "scope"));
        assertFalse(text(bom, "version").isEmpty(), "the BOM import needs a version");

        List<String> direct = new ArrayList<>();
        for (Element dependency : dependencies(pom, "project")) {
            direct.add(coordinates(dependency));
            assertEquals("", text(dependency, "version"), coordinates(dependency) + ": the BOM gives the version");
        }
        assertEquals(List.of("dev.kanuki:kanuki-core", "dev.kanuki:kanuki-file", "dev.kanuki:kanuki-redis"), direct);
    }

    private List<Path> markdownPages() throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> {
                        for (Path part : root.relativize(p)) {
                            String name = part.toString();
                            if (name.equals("target") || name.startsWith(".") || name.equals("node_modules")) {
                                return false;
                            }
                        }
                        return true;
                    })
                    .sorted()
                    .toList();
        }
    }

    /** The text with fenced code blocks blanked out: a {@code ](x)} in code is not a link. */
    private static String outsideCodeBlocks(String markdown) {
        StringBuilder out = new StringBuilder();
        boolean inCode = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.startsWith("```")) {
                inCode = !inCode;
            } else if (!inCode) {
                out.append(line);
            }
            out.append('\n');
        }
        return out.toString();
    }

    /** The anchors a Markdown renderer such as GitHub's makes of a page's headings. */
    private static Set<String> anchorsOf(Path page) {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        String text;
        try {
            text = Files.readString(page, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + page, e);
        }
        for (String line : outsideCodeBlocks(text).split("\n")) {
            Matcher m = HEADING.matcher(line);
            if (m.matches()) {
                String slug = m.group(1).toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N}_ -]", "")
                        .replace(' ', '-');
                int n = seen.merge(slug, 1, Integer::sum);
                anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
            }
        }
        return anchors;
    }

    /** The {@code <dependency>} elements directly under {@code <parent><dependencies>}. */
    private static List<Element> dependencies(Document pom, String parent) {
        List<Element> found = new ArrayList<>();
        Element container = parent.equals("project") ? pom.getDocumentElement() : child(pom.getDocumentElement(), parent);
        if (container == null || child(container, "dependencies") == null) {
            return found;
        }
        NodeList nodes = child(container, "dependencies").getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            if (nodes.item(i) instanceof Element e && e.getTagName().equals("dependency")) {
                found.add(e);
            }
        }
        return found;
    }

    private static Element child(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e;
            }
        }
        return null;
    }

    private static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null ? "" : e.getTextContent().trim();
    }

    private static String coordinates(Element dependency) {
        return text(dependency, "groupId") + ":" + text(dependency, "artifactId");
    }
}
