// The checks every adopter project shares: one Netty version in the dependency tree.
new GroovyShell(binding).evaluate(new File(checks))

// And the Lettuce Warden is built on, not the one Boot's parent manages.
def log = new File(basedir, 'build.log').text
def lettuce = (log =~ /io\.lettuce:lettuce-core:jar:([^:\s]+):compile/).collect { it[1] } as TreeSet
assert lettuce == [lettuceVersion] as TreeSet : "Lettuce ${lettuce}, expected ${lettuceVersion}"
println "[adopter] warden-spring-boot-starter: Lettuce ${lettuce.join('')}"
return true
