package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.guard.KeyFunction;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.OpDec;
import org.springframework.expression.spel.ast.OpInc;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code @Fenced} key written in SpEL, parsed and checked once per method: arguments are variables by name
 * ({@code #accountId}), by position ({@code #p0}, {@code #a0}) and {@code #root} is the argument array. Evaluation
 * is read-only (properties and instance methods): type references ({@code T(...)}), constructors ({@code new}),
 * bean references ({@code @bean}), function references and assignment ({@code =}, {@code ++}, {@code --}) are refused
 * when the key is compiled, and the shared evaluation context ({@link #READ_ONLY}) refuses them again. A key that
 * is a single argument skips evaluation altogether, one that is a chain of getters over an argument
 * ({@code #order.customer.id}) is read through method handles ({@link PropertyPathKey}); any other is evaluated with
 * its parameters read by position from the argument array, no context per call, and compiled to bytecode once warm
 * where SpEL can (where it cannot, the key text is interpreted with its variables by name, which costs less).
 */
final class SpelKeyFunction implements KeyFunction {

    /**
     * What every key is evaluated in: read-only property access and instance methods, no types, constructors, beans
     * or assignment; shared, it holds no variables (parameters are read by position from the root array).
     */
    static final EvaluationContext READ_ONLY =
            SimpleEvaluationContext.forReadOnlyDataBinding().withInstanceMethods().build();

    /**
     * Variables SpEL itself defines ({@code #root}, the argument array; {@code #this}), whatever a parameter is named.
     */
    static final Set<String> RESERVED = Set.of("root", "this");

    private static final Pattern POSITIONAL = Pattern.compile("[pa](\\d+)");
    private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

    /** Evaluations of the positional form after which it should have been compiled (SpEL tries after 100). */
    private static final int SETTLE_AFTER = 300;

    private final Expression expression;
    private final Expression evaluated;
    private final Map<String, Integer> indexByName;
    private final int direct;
    private final PropertyPathKey path;
    /** Racy on purpose: counts toward {@link #SETTLE_AFTER}, no further once settled. */
    private int positionalCalls;
    private volatile boolean settled;
    /** SpEL could not compile the positional form: the key text is interpreted with its variables by name. */
    private volatile boolean byName;

    private SpelKeyFunction(Expression expression, Expression evaluated, Map<String, Integer> indexByName, int direct,
                            PropertyPathKey path) {
        this.expression = expression;
        this.evaluated = evaluated;
        this.indexByName = indexByName;
        this.direct = direct;
        this.path = path;
    }

    /**
     * Parses {@code key} for {@code method} and checks that every variable it names is a parameter.
     *
     * @param key       the expression as written in the annotation
     * @param method    the method whose parameters the names refer to (the one carrying the annotation)
     * @param operation the method as shown in messages
     * @throws FencingConfigurationException naming the method, the key and the parameters when it does not parse
     *                                       or names an unknown parameter
     */
    static SpelKeyFunction compile(String key, Method method, String operation) {
        Expression expression;
        SpelExpressionParser parser = new SpelExpressionParser(new SpelParserConfiguration(SpelCompilerMode.MIXED,
                method.getDeclaringClass().getClassLoader()));
        try {
            expression = parser.parseExpression(key);
        } catch (ParseException e) {
            throw new FencingConfigurationException("@Fenced key '" + key + "' on " + operation
                    + " is not a valid SpEL expression: " + e.getMessage(), e);
        }
        refuseUnsafe(expression, key, operation);
        int count = method.getParameterCount();
        String[] names = NAMES.getParameterNames(method);
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < count; i++) {
            index.put("p" + i, i);
            index.put("a" + i, i);
        }
        if (names != null) {
            for (int i = 0; i < names.length; i++) {
                index.put(names[i], i);
            }
        }
        for (String variable : variables(expression)) {
            if (variable.equals("root") || variable.equals("this") || index.containsKey(variable)) {
                continue;
            }
            Matcher positional = POSITIONAL.matcher(variable);
            String known = names == null
                    ? "parameter names are not available (compile with -parameters: javac's -parameters, or "
                    + "<parameters>true</parameters> in the aspectj-maven-plugin when ajc compiles the class; or name "
                    + "the parameter by position, " + (count == 1 ? "#p0" : "#p0 to #p" + (count - 1)) + ")"
                    : "parameters are " + (count == 0 ? "none" : String.join(", ", names));
            String why = positional.matches()
                    ? "#" + variable + " is out of range, the method has " + count + " parameter(s)"
                    : "#" + variable + " is not a parameter; " + known;
            throw new FencingConfigurationException("@Fenced key '" + key + "' on " + operation + " names an unknown "
                    + "parameter: " + why);
        }
        PropertyPathKey.refuseUnknownProperties(expression, method, index, key, operation);
        int direct = directIndex(expression, index);
        return new SpelKeyFunction(expression, positional(parser, key, expression, index), Map.copyOf(index), direct,
                direct >= 0 ? null : PropertyPathKey.of(expression, method, index, parser));
    }

    /**
     * The expression as evaluated: each parameter variable rewritten to its place in the argument array, the root
     * object ({@code #order} as {@code #root[1]}), so that an evaluation needs no context of its own, only the
     * shared read-only one, and the compiled expression reads arguments by index rather than by name.
     */
    private static Expression positional(SpelExpressionParser parser, String key, Expression parsed,
                                         Map<String, Integer> index) {
        List<SpelNode> variables = new ArrayList<>();
        for (SpelNode node : nodes(parsed)) {
            String name = node instanceof VariableReference ? node.toStringAST().substring(1) : null;
            if (name != null && !RESERVED.contains(name) && index.containsKey(name)) {
                variables.add(node);
            }
        }
        variables.sort((a, b) -> Integer.compare(b.getStartPosition(), a.getStartPosition()));
        StringBuilder text = new StringBuilder(key);
        for (SpelNode variable : variables) {
            text.replace(variable.getStartPosition(), variable.getEndPosition(),
                    "#root[" + index.get(variable.toStringAST().substring(1)) + "]");
        }
        return parser.parseExpression(text.toString());
    }

    /** Refuses, before anything is evaluated, every construct that reaches beyond the arguments or changes state. */
    private static void refuseUnsafe(Expression expression, String key, String operation) {
        for (SpelNode node : nodes(expression)) {
            String what = node instanceof TypeReference ? "a type reference (T(...))"
                    : node instanceof ConstructorReference ? "a constructor call (new ...)"
                    : node instanceof BeanReference ? "a bean reference (@...)"
                    : node instanceof FunctionReference ? "a function call (#name(...))"
                    : node instanceof Assign || node instanceof OpInc || node instanceof OpDec ? "an assignment"
                    : null;
            if (what != null) {
                throw new FencingConfigurationException("@Fenced key '" + key + "' on " + operation + " contains "
                        + what + " ('" + node.toStringAST() + "'); keys are read-only expressions over the arguments "
                        + "(properties and instance methods only)");
            }
            if (node == ((SpelExpression) expression).getAST() && node instanceof VariableReference
                    && (node.toStringAST().equals("#root") || node.toStringAST().equals("#this"))) {
                throw new FencingConfigurationException("@Fenced key '" + key + "' on " + operation + " is the "
                        + "argument array, whose text names the array instance, not an entity; key on one argument "
                        + "(e.g. '#p0')");
            }
        }
    }

    /** The argument index when the key is one variable ({@code #accountId}, {@code #p0}), else -1. */
    private static int directIndex(Expression expression, Map<String, Integer> index) {
        if (expression instanceof SpelExpression spel && spel.getAST() instanceof VariableReference variable) {
            Integer position = index.get(variable.toStringAST().substring(1));
            return position == null ? -1 : position;
        }
        return -1;
    }

    /**
     * A key that is one argument is read straight from the arguments, a chain of getters over one argument through
     * method handles ({@link PropertyPathKey}); anything else is evaluated by SpEL.
     */
    @Override
    public Object keyOf(Object[] args) {
        if (direct >= 0) {
            return direct < args.length ? args[direct] : null;
        }
        if (path != null) {
            return path.read(args, READ_ONLY);
        }
        if (byName) {
            return expression.getValue(new ArgumentsEvaluationContext(indexByName, args));
        }
        Object key = evaluated.getValue(READ_ONLY, args);
        if (!settled && ++positionalCalls >= SETTLE_AFTER) {
            settle();
        }
        return key;
    }

    /** The argument a key that is one argument, or a chain of getters over one, reads; else -1. */
    @Override
    public int argument() {
        return direct >= 0 ? direct : path != null ? path.argument() : -1;
    }

    @Override
    public Object keyOfArgument(Object argument) {
        if (direct >= 0) {
            return argument;
        }
        if (path != null) {
            return path.readFrom(argument, READ_ONLY);
        }
        throw new UnsupportedOperationException("the key is evaluated by SpEL over every argument");
    }

    /**
     * Once warm: a positional form SpEL compiled stays; one it could not compile (a type the key reads is not
     * public) gives way to the key text with its variables by name, which SpEL interprets at about half the cost.
     */
    private synchronized void settle() {
        if (!settled) {
            byName = !((SpelExpression) evaluated).compileExpression();
            settled = true;
        }
    }

    /** Whether the key is now interpreted by name, SpEL having failed to compile it; for tests. */
    boolean readsByName() {
        return byName;
    }

    /** Whether the key is read as a chain of getters over one argument, without SpEL on the common path. */
    boolean readsPropertyPath() {
        return path != null;
    }

    /**
     * The index of the parameter the key is, when it is one variable ({@code #accountId}, {@code #p0}) and so read
     * straight from the arguments without evaluation; -1 when the key is evaluated by SpEL.
     */
    int parameterIndex() {
        return direct;
    }

    /** The parsed expression, for tests. */
    Expression expression() {
        return expression;
    }

    /** The expression as evaluated, parameters read by position from the root array, for tests. */
    Expression evaluated() {
        return evaluated;
    }

    private static Set<String> variables(Expression expression) {
        Set<String> found = new LinkedHashSet<>();
        for (SpelNode node : nodes(expression)) {
            if (node instanceof VariableReference) {
                found.add(node.toStringAST().substring(1));
            }
        }
        return found;
    }

    /** Every node of the parsed expression. */
    private static List<SpelNode> nodes(Expression expression) {
        List<SpelNode> all = new ArrayList<>();
        if (expression instanceof SpelExpression spel) {
            List<SpelNode> pending = new ArrayList<>();
            pending.add(spel.getAST());
            while (!pending.isEmpty()) {
                SpelNode node = pending.remove(pending.size() - 1);
                all.add(node);
                for (int i = 0; i < node.getChildCount(); i++) {
                    pending.add(node.getChild(i));
                }
            }
        }
        return all;
    }
}
