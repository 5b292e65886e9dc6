package dev.fencing.verify.workload;

import java.util.ArrayList;
import java.util.List;

/** The lock-set row's text form: the elements separated by commas, in the order they were added. */
public final class SetCodec {

    private SetCodec() {
    }

    public static List<Long> decode(String text) {
        List<Long> elements = new ArrayList<>();
        if (text == null || text.isBlank()) {
            return elements;
        }
        for (String part : text.split(",")) {
            elements.add(Long.parseLong(part.strip()));
        }
        return elements;
    }

    public static String encode(List<Long> elements) {
        StringBuilder b = new StringBuilder(elements.size() * 9);
        for (Long e : elements) {
            if (!b.isEmpty()) {
                b.append(',');
            }
            b.append(e);
        }
        return b.toString();
    }
}
