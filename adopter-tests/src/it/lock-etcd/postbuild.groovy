// The checks every adopter project shares: one Netty version in the dependency tree.
new GroovyShell(binding).evaluate(new File(checks))
