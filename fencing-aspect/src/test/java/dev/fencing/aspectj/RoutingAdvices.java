package dev.fencing.aspectj;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Writes the routing advices of {@code FencingAspect.aj}: one per group of join points (argument-free, keyed by
 * parameter count) and per return type that would otherwise be boxed, each the same bracket protocol around an
 * inlined {@code proceed}. The aspect holds them between markers; {@link RoutingAdvicesTest} fails when they differ
 * from what this renders, and rewrites them with {@code -Dfencing.aspect.update=true}.
 */
final class RoutingAdvices {

    /** The return types with an advice of their own (boxed otherwise), then every other one. */
    private static final List<String> RETURNS = List.of("int", "long", "float", "double", "Object");

    private static final int WIDTH = 120;

    /** A group of join points: the advice's formals, its pointcut, whether keyed, and how it finds the token. */
    private record Group(List<String> formals, String pointcut, boolean keyed, List<String> token) {
    }

    private RoutingAdvices() {
    }

    /** The advices of the argument-free join points: unkeyed, or keyed with no parameter. */
    static String argumentFree() {
        return render(List.of(new Group(List.of(), "argumentFree()", false,
                List.of("FencingToken token = bracket.token(NONE);"))));
    }

    /** The advices of the keyed join points of one to twelve parameters, which bind their arguments. */
    static String keyed() {
        List<Group> groups = new ArrayList<>();
        for (int count = 1; count <= 6; count++) {
            List<String> names = names("a", count);
            int width = count <= 3 ? 3 : 6; // the bracket takes three arguments, or six
            List<String> passed = new ArrayList<>(names);
            while (passed.size() < width) {
                passed.add("null");
            }
            groups.add(new Group(names, "keyed" + count + "(" + String.join(", ", names) + ")", true,
                    List.of("FencingToken token = bracket.token(" + count + ", " + String.join(", ", passed) + ");")));
        }
        List<String> more = new ArrayList<>(names("a", 6));
        more.addAll(names("b", 6));
        groups.add(new Group(more, "keyedMore(" + String.join(", ", more) + ")", true, List.of(
                "int key = bracket.point().keyArgument();",
                "FencingToken token = key >= 0 && key < 6 ? bracket.token(6, " + String.join(", ", names("a", 6)) + ")",
                "        : bracket.token(arguments(at, " + String.join(", ", more) + "));")));
        return render(groups);
    }

    private static List<String> names(String prefix, int count) {
        return IntStream.range(0, count).mapToObj(i -> prefix + i).collect(Collectors.toList());
    }

    private static String render(List<Group> groups) {
        StringBuilder out = new StringBuilder();
        for (Group group : groups) {
            for (String type : RETURNS) {
                if (!out.isEmpty()) {
                    out.append('\n');
                }
                advice(out, group, type);
            }
        }
        return out.toString();
    }

    private static void advice(StringBuilder out, Group group, String type) {
        String args = group.formals().stream().collect(Collectors.joining(", "));
        String proceed = "proceed(" + args + ")";
        String selector = type.equals("Object") ? "returnsOther()" : "execution(" + type + " *(..))";
        header(out, type, group.formals(), group.pointcut() + " && " + selector);
        line(out, 2, "JoinPoint.StaticPart at = thisJoinPointStaticPart;");
        line(out, 2, "Object route = route(at, " + group.keyed() + ");");
        line(out, 2, "if (route instanceof FenceBracket && ((FenceBracket) route).enforcing()) {");
        line(out, 3, "FenceBracket bracket = (FenceBracket) route;");
        for (String statement : group.token()) {
            line(out, 3, statement);
        }
        line(out, 3, "BracketFenceStore.Entry entry = bracket.enter(token);");
        line(out, 3, type + " result;");
        line(out, 3, "try {");
        line(out, 4, "result = " + proceed + ";");
        line(out, 3, "} catch (Throwable t) {");
        line(out, 4, "throw FencingAspect.<RuntimeException>rethrow(bracket.failed(entry, token, t));");
        line(out, 3, "}");
        line(out, 3, "bracket.exit(entry);");
        line(out, 3, "return result;");
        line(out, 2, "}");
        line(out, 2, "if (route == PLAIN) {");
        line(out, 3, "return " + proceed + ";");
        line(out, 2, "}");
        line(out, 2,
                "// the callback fence: a bracket's resource in observe mode, or a point only the guard can fence");
        line(out, 2, "JoinPoint.StaticPart previous = pend(at);");
        line(out, 2, "try {");
        line(out, 3, "return " + proceed + ";");
        line(out, 2, "} finally {");
        line(out, 3, "unpend(previous);");
        line(out, 2, "}");
        line(out, 1, "}");
    }

    /** {@code type around(formals): pointcut {}, wrapped where a line would pass the width. */
    private static void header(StringBuilder out, String type, List<String> formals, String pointcut) {
        List<String> declared = formals.stream().map(name -> "Object " + name).collect(Collectors.toList());
        String opening = "    " + type + " around(";
        String oneLine = opening + String.join(", ", declared) + "): " + pointcut + " {";
        if (oneLine.length() <= WIDTH) {
            out.append(oneLine).append('\n');
            return;
        }
        String signature = opening + String.join(", ", declared) + "):";
        if (signature.length() <= WIDTH) {
            out.append(signature).append('\n');
        } else {
            out.append(opening).append(String.join(", ", declared.subList(0, 6))).append(",\n");
            out.append("            ").append(String.join(", ", declared.subList(6, declared.size()))).append("):\n");
        }
        out.append("            ").append(pointcut).append(" {\n");
    }

    private static void line(StringBuilder out, int depth, String text) {
        out.append("    ".repeat(depth)).append(text).append('\n');
    }
}
