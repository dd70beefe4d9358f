"""CycloneDX 1.6 JSON, built with cyclonedx-python-lib and checked against the official schema.

Models are ``machine-learning-model`` components, datasets and generated content ``data``
components; lineage links become dependencies, and licence evidence and confidence become
``paddlectl:`` properties, so nothing the audit knows is lost in the SBOM.
"""

from __future__ import annotations

from cyclonedx.model import ExternalReference, ExternalReferenceType, HashAlgorithm, HashType, Property, XsUri
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.contact import OrganizationalEntity
from cyclonedx.model.dependency import Dependency
from cyclonedx.model.license import LicenseExpression
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL

from ..audit import AuditResult, ItemAudit
from ..lineage import Lineage
from ..model import Kind

COMPONENT_TYPE = {
    Kind.LIBRARY: ComponentType.LIBRARY,
    Kind.MODEL: ComponentType.MACHINE_LEARNING_MODEL,
    Kind.DATASET: ComponentType.DATA,
    Kind.CONTENT: ComponentType.DATA,
    Kind.PROJECT: ComponentType.APPLICATION,
}


class CycloneDxValidationError(RuntimeError):
    """The generated BOM does not validate against the CycloneDX 1.6 schema (a bug in this writer)."""


def _component(audit: ItemAudit, policy_name: str) -> Component:
    item = audit.item
    properties = [Property(name="paddlectl:verdict", value=str(audit.action))]
    properties += [Property(name="paddlectl:license-confidence", value=f"{item.confidence:.2f}")]
    if item.best:
        properties.append(
            Property(name="paddlectl:license-evidence", value=f"{item.best.source}: {item.best.location}")
        )
    if audit.verdict and audit.verdict.choice:
        properties.append(Property(name="paddlectl:license-choice", value=f"{audit.verdict.choice} ({policy_name})"))
    properties += [Property(name="paddlectl:lineage", value=f"{link.relation}: {link.target}") for link in item.links]
    if item.license is None:
        properties.append(Property(name="paddlectl:license", value="UNKNOWN"))
    references = []
    for url, kind in ((item.source, ExternalReferenceType.WEBSITE), (item.license_link, ExternalReferenceType.LICENSE)):
        if url and url.startswith(("http://", "https://")):
            references.append(ExternalReference(type=kind, url=XsUri(url)))
    return Component(
        name=item.name,
        version=item.version,
        type=COMPONENT_TYPE[item.kind],
        bom_ref=item.id,
        purl=PackageURL.from_string(item.purl) if item.purl else None,
        licenses=[LicenseExpression(item.license)] if item.license else None,
        hashes=[HashType(alg=HashAlgorithm.SHA_256, content=f.sha256) for f in item.files],
        supplier=OrganizationalEntity(name=item.supplier) if item.supplier else None,
        external_references=references,
        properties=properties,
    )


def build_bom(result: AuditResult) -> Bom:
    """The CycloneDX BOM for an audit: the project (if any) as the metadata component, the rest as components."""
    components = {a.item.id: _component(a, result.policy.name) for a in result.audits}
    bom = Bom()
    bom.metadata.timestamp = result.created
    bom.metadata.tools.components.add(
        Component(name="paddlectl-license-audit", version=result.tool_version, type=ComponentType.APPLICATION)
    )
    projects = [a.item for a in result.audits if a.item.kind == Kind.PROJECT]
    if projects:
        bom.metadata.component = components.pop(projects[0].id)
    for component in components.values():
        bom.components.add(component)
    # Dependencies are added directly: Bom.register_dependency searches every registered entry per
    # call, which is quadratic in the inventory, and each item is registered once here anyway.
    items = [a.item for a in result.audits]
    lineage = Lineage(items, {}, result.kb)
    for item in items:
        parents = [lineage.resolve(link) for link in item.links]
        targets = [components[p.id].bom_ref for p in parents if p is not None and p.id in components]
        if targets and item.id in components:
            bom.dependencies.add(Dependency(components[item.id].bom_ref, [Dependency(ref) for ref in targets]))
    if projects:
        every = [Dependency(c.bom_ref) for c in components.values()]
        bom.dependencies.add(Dependency(bom.metadata.component.bom_ref, every))
    return bom


def validate_cyclonedx(text: str) -> None:
    """Check a CycloneDX 1.6 JSON text against the official schema shipped with cyclonedx-python-lib.

    Kept separate from rendering because the schema's IRI format checks cost about 0.1 s per URL.
    """
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    if error is not None:
        raise CycloneDxValidationError(f"the CycloneDX 1.6 document does not validate: {error}")


def render_cyclonedx(result: AuditResult, validate: bool = False) -> str:
    """CycloneDX 1.6 as JSON text (validated when asked)."""
    text = JsonV1Dot6(build_bom(result)).output_as_string(indent=2) + "\n"
    if validate:
        validate_cyclonedx(text)
    return text
