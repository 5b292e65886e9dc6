package dev.fencing.docs;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.InputStream;

/** The two XML reads the coordinate checks share: parse a document, and the text of an element's direct child. */
final class PomXml {

    private PomXml() {
    }

    static Document parse(InputStream in) throws Exception {
        try (in) {
            return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
        }
    }

    static String childText(Element parent, String name) {
        NodeList children = parent.getChildNodes();
        for (int i = 0; i < children.getLength(); i++) {
            if (children.item(i) instanceof Element child && child.getTagName().equals(name)) {
                return child.getTextContent().trim();
            }
        }
        throw new AssertionError("no <" + name + "> in <" + parent.getTagName() + ">");
    }
}
