package dev.fencing.verify.history;

import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The line format of docs/verification.md, both ways: an event to one line of JSON (fields that are null are left
 * out) and one line back to an event. Stateless and thread-safe.
 */
public final class HistoryJson {

    /** A field given twice in one line is an error (the last one would win: an ok could silently become info). */
    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    /** The fields of each kind of line: any other is a typo that would silently drop a value (a token). */
    private static final Set<String> OP_FIELDS = Set.of("type", "process", "index", "f", "resource", "token",
            "value", "reason", "wall", "mono");
    private static final Set<String> NEMESIS_FIELDS = Set.of("type", "f", "nemesis", "target", "wall", "mono");
    private static final Set<String> COMMIT_FIELDS = Set.of("type", "seq", "resource", "token", "process", "op");

    private HistoryJson() {
    }

    /** The one-line JSON form of {@code event}, without a line break. */
    public static String toLine(HistoryEvent event) {
        return MAPPER.writeValueAsString(toNode(event));
    }

    /** The JSON object of {@code event}, for embedding in a report. */
    public static ObjectNode toNode(HistoryEvent event) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("type", event.jsonType());
        if (event instanceof Op op) {
            node.put("process", op.process());
            node.put("index", op.index());
            node.put("f", op.f());
            putIfSet(node, "resource", op.resource());
            if (op.token() != null) {
                node.put("token", op.token());
            }
            if (op.value() != null) {
                node.set("value", valueNode(op.value()));
            }
            putIfSet(node, "reason", op.reason());
            node.put("wall", op.wall());
            node.put("mono", op.mono());
        } else if (event instanceof NemesisEvent nemesis) {
            node.put("f", nemesis.f());
            node.put("nemesis", nemesis.nemesis());
            putIfSet(node, "target", nemesis.target());
            node.put("wall", nemesis.wall());
            node.put("mono", nemesis.mono());
        } else if (event instanceof CommitRow row) {
            node.put("seq", row.seq());
            node.put("resource", row.resource());
            if (row.token() != null) {
                node.put("token", row.token());
            }
            node.put("process", row.process());
            node.put("op", row.op());
        }
        return node;
    }

    /**
     * The event one history line holds.
     *
     * @throws IllegalArgumentException when the line is not a JSON object of a known type with its required fields
     */
    public static HistoryEvent fromLine(String line) {
        JsonNode node;
        try {
            node = MAPPER.readTree(line);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not JSON: " + e.getMessage(), e);
        }
        if (node == null || !node.isObject()) {
            throw new IllegalArgumentException("not a JSON object");
        }
        String type = text(node, "type", true);
        Set<String> known = switch (type) {
            case "invoke", "ok", "fail", "info" -> OP_FIELDS;
            case "nemesis" -> NEMESIS_FIELDS;
            case "commit" -> COMMIT_FIELDS;
            default -> throw new IllegalArgumentException("unknown type '" + type + "'");
        };
        for (String field : node.propertyNames()) {
            if (!known.contains(field)) {
                throw new IllegalArgumentException("unknown field '" + field + "' in a " + type + " event");
            }
        }
        return switch (type) {
            case "invoke", "ok", "fail", "info" -> new Op(OpType.fromJson(type), process(node),
                    number(node, "index"), text(node, "f", true), text(node, "resource", false),
                    optionalNumber(node, "token"), value(node.get("value")), text(node, "reason", false),
                    number(node, "wall"), number(node, "mono"));
            case "nemesis" -> new NemesisEvent(text(node, "f", true), text(node, "nemesis", true),
                    text(node, "target", false), number(node, "wall"), number(node, "mono"));
            case "commit" -> new CommitRow(number(node, "seq"), text(node, "resource", true),
                    optionalNumber(node, "token"), process(node), number(node, "op"));
            default -> throw new IllegalArgumentException("unknown type '" + type + "'");
        };
    }

    private static void putIfSet(ObjectNode node, String field, String value) {
        if (value != null) {
            node.put(field, value);
        }
    }

    private static JsonNode valueNode(Object value) {
        if (value instanceof List<?> list) {
            ArrayNode array = MAPPER.createArrayNode();
            list.forEach(element -> array.add(valueNode(element)));
            return array;
        }
        return MAPPER.valueToTree(value);
    }

    private static Object value(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (node.isArray()) {
            List<Object> list = new ArrayList<>();
            node.forEach(element -> list.add(value(element)));
            return list;
        }
        if (node.isIntegralNumber()) {
            return node.longValue();
        }
        if (node.isNumber()) {
            return node.doubleValue();
        }
        if (node.isBoolean()) {
            return node.booleanValue();
        }
        if (node.isString()) {
            return node.stringValue();
        }
        throw new IllegalArgumentException("value must be a number, string, boolean or array, was " + node);
    }

    private static String text(JsonNode node, String field, boolean required) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            if (required) {
                throw new IllegalArgumentException("missing '" + field + "'");
            }
            return null;
        }
        if (!value.isString()) {
            throw new IllegalArgumentException("'" + field + "' must be a string, was " + value);
        }
        return value.stringValue();
    }

    /** The process number: an int, not cut down from a larger number (which could merge two processes). */
    private static int process(JsonNode node) {
        long process = number(node, "process");
        if (process != (int) process) {
            throw new IllegalArgumentException("'process' out of range, was " + process);
        }
        return (int) process;
    }

    private static long number(JsonNode node, String field) {
        Long value = optionalNumber(node, field);
        if (value == null) {
            throw new IllegalArgumentException("missing '" + field + "'");
        }
        return value;
    }

    private static Long optionalNumber(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber()) {
            throw new IllegalArgumentException("'" + field + "' must be an integer, was " + value);
        }
        return value.longValue();
    }
}
